import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readArtifact, type ArtifactSettings } from '@benchfleet/artifacts';
import { errorMessage, roundLikePython } from '@benchfleet/core';
import type { ExportContext, GradeRecord, RunExporter } from '@benchfleet/benchmark-kit';
import { osworldTaskGrades } from './osworld-run-grading.js';
import {
  StepsRepository,
  TasksRepository,
  type Database,
  type Run,
  type Step,
  type Task,
} from '@benchfleet/db';
import {
  osworldStepActionSchema,
  osworldTaskResultSchema,
  type OsworldRunConfig,
} from './osworld-run-config.js';
import {
  writeOsworldLogs,
  type OsworldLogStep,
  type OsworldLogTask,
} from './osworld-logs-exporter.js';
import { OSWORLD_POLL_INTERVAL_MS } from './osworld-episode.js';
import { OSWORLD_DOMAINS } from './osworld-dataset.js';
import {
  formatPythonJson,
  formatPythonUtcTimestamp,
  pythonFloat,
} from './python-compatible-format.js';

// `scheduler export RUN --format osworld-logs`: the original benchmark's osworld-logs directory,
// rebuilt from the Postgres rows and the artifact store rather than from in-memory results.

/** Written beside final.json when something could not be exported (a screenshot missing from the store). */
const EXPORT_PROBLEMS_FILE = 'export_problems.json';

export const osworldLogsExporter: RunExporter<OsworldRunConfig> = {
  description:
    "the original Bytebot OSWorld benchmark's directory: <task_id>/step_NNN.json, <task_id>/screenshots/step_NNN.png, <task_id>/result.json, final.json",
  signatureFile: 'final.json',
  async write(context) {
    const tasks = await new TasksRepository(context.db).listByRun(context.run.id);
    const settled = tasks.filter((task) => task.status !== 'queued' && task.status !== 'running');
    const problems: string[] = [];
    let done = 0;
    // A graded run: each task's grade beside the original fields, the graded numbers in final.json.
    const graded = context.summary.graded;
    const grades = graded ? await osworldTaskGrades(context.db, context.run.id) : undefined;
    await writeOsworldLogs(context.dir, {
      benchmark_config: benchmarkConfigOf(context, tasks),
      started_at: formatPythonUtcTimestamp(
        (context.run.started_at ?? context.run.created_at).getTime(),
      ),
      finished_at: formatPythonUtcTimestamp(runFinishedAt(context.run, settled).getTime()),
      tasks: logTasks(context.db, settled, context.artifacts, problems, grades, () =>
        context.progress(++done, settled.length),
      ),
      ...(graded ? { graded } : {}),
    });
    if (problems.length > 0)
      await writeFile(path.join(context.dir, EXPORT_PROBLEMS_FILE), formatPythonJson({ problems }));
    return { exported: settled.length, unfinished: tasks.length - settled.length, problems };
  },
};

/**
 * The original's `benchmark_config`, its keys in its order and with its meanings (and types):
 * max_tasks is `--max-tasks` (a run without one: its task count, the smallest limit that runs them
 * all), poll_interval the seconds between REST reads (a float; the fleet follows events too),
 * api_url the agent the tasks ran on (the first, when they ran on several stacks), domain one
 * domain or "all". What only the fleet has goes under `benchfleet`.
 */
function benchmarkConfigOf(
  context: ExportContext<OsworldRunConfig>,
  tasks: readonly Task[],
): Record<string, unknown> {
  const { run, config } = context;
  const apiUrls = [
    ...new Set(
      tasks.flatMap((task) => {
        const url = osworldTaskResultSchema.safeParse(task.result ?? {}).data?.api_url;
        return url ? [url] : [];
      }),
    ),
  ];
  const domains = config.domains ?? [];
  const allDomains =
    domains.length === 0 || OSWORLD_DOMAINS.every((name) => domains.includes(name));
  return {
    max_tasks: config.max_tasks ?? tasks.length,
    max_steps: config.max_steps,
    poll_interval: pythonFloat(OSWORLD_POLL_INTERVAL_MS / 1000),
    api_url: apiUrls[0] ?? null,
    // The run's --model, else the first model its stack offered (recorded by the worker that asked).
    model: run.model,
    dataset: config.source ?? null,
    domain: allDomains ? 'all' : domains.join(','),
    benchfleet: {
      run_id: run.id,
      run_name: run.name,
      code_version: run.code_version,
      tasks: tasks.length,
      domains: config.domains,
      api_urls: apiUrls,
      stall_timeout_seconds: config.stall_timeout_seconds,
      events: 'Socket.IO task events, with REST reads every poll_interval seconds as the fallback',
    },
  };
}

function runFinishedAt(run: Run, settled: readonly Task[]): Date {
  if (run.finished_at) return run.finished_at;
  const ends = settled
    .map((task) => task.finished_at?.getTime())
    .filter((at): at is number => at !== undefined);
  return ends.length > 0 ? new Date(Math.max(...ends)) : new Date();
}

/** One task at a time, so a large run's steps and screenshots are never all in memory. */
async function* logTasks(
  db: Database,
  tasks: readonly Task[],
  artifacts: ArtifactSettings,
  problems: string[],
  grades: ReadonlyMap<string, GradeRecord> | undefined,
  taskWritten: () => void,
): AsyncIterable<OsworldLogTask> {
  const steps = new StepsRepository(db);
  for (const task of tasks) {
    const recorded = osworldTaskResultSchema.safeParse(task.result ?? {});
    const result = recorded.success ? recorded.data : {};
    const startMs = (task.started_at ?? task.finished_at ?? new Date(0)).getTime();
    const endMs = (task.finished_at ?? task.started_at ?? new Date(0)).getTime();
    // Only the final attempt's steps: an earlier attempt was a run that did not count.
    const rows =
      task.attempts > 0 ? await steps.listByTask(task.run_id, task.task_id, task.attempts) : [];
    yield {
      task_id: task.task_id,
      domain: task.domain,
      instruction: task.instruction,
      bytebot_task_id: result.bytebot_task_id ?? task.external_id ?? '',
      status: task.status,
      final_api_status:
        task.final_api_status ?? (task.status === 'cancelled' ? 'CANCELLED' : 'UNKNOWN'),
      total_steps: task.total_steps,
      start_time: result.start_time ?? formatPythonUtcTimestamp(startMs),
      end_time: result.end_time ?? formatPythonUtcTimestamp(endMs),
      // The same rounding as the run summary, so final.json and `scheduler aggregate` agree.
      duration_seconds: roundLikePython((task.duration_ms ?? 0) / 1000, 1),
      // The original writes an error message only for a task that ended in error.
      error_message: task.status === 'error' ? task.error : null,
      ...(grades ? { graded: grades.get(task.task_id)?.record ?? null } : {}),
      steps: rows.map((row) => logStep(task, row, artifacts, problems)),
    };
    taskWritten();
  }
}

function logStep(
  task: Task,
  row: Step,
  artifacts: ArtifactSettings,
  problems: string[],
): OsworldLogStep {
  const action = osworldStepActionSchema.safeParse(row.action);
  const uri = row.screenshot_uri;
  return {
    step_number: row.step,
    timestamp: row.at.toISOString(),
    message_id: row.external_id ?? '',
    tool_calls: action.success
      ? action.data.tool_calls.map((call) => ({ name: call.name, input: call.input ?? {} }))
      : [],
    text_content: row.text ?? '',
    // A screenshot the store cannot give is reported, not fatal: the step is written without it.
    screenshot:
      uri === null
        ? null
        : () =>
            readArtifact(uri, artifacts).catch((error: unknown) => {
              problems.push(
                `task ${task.task_id} step ${row.step}: screenshot ${uri} cannot be read (${errorMessage(error)})`,
              );
              return null;
            }),
  };
}
