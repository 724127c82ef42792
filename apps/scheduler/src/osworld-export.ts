import path from 'node:path';
import { z } from 'zod';
import { readArtifact, type ArtifactSettings } from '@benchfleet/artifacts';
import { UsageError, errorMessage } from '@benchfleet/core';
import { runsRepository, stepsRepository, tasksRepository, type Database, type Run, type Step, type Task } from '@benchfleet/db';
import {
  formatPythonUtcTimestamp,
  roundLikePython,
  writeOsworldLogs,
  type OsworldFinalJson,
  type OsworldLogStep,
  type OsworldLogTask,
} from '@benchfleet/osworld';

// `scheduler export RUN --format osworld-logs`: the original benchmark's osworld-logs directory,
// rebuilt from the Postgres rows and the artifact store rather than from in-memory results.

export interface OsworldLogsExport {
  outDir: string;
  finalJson: OsworldFinalJson;
  /** Tasks with an outcome: each has its directory and a line in final.json. */
  exported: number;
  /** Tasks still queued or running: left out, as the original has no result.json for them yet. */
  unfinished: number;
}

const runConfigSchema = z.looseObject({
  source: z.string().optional(),
  domains: z.array(z.string()).optional(),
  max_steps: z.number().optional(),
  stall_timeout_seconds: z.number().optional(),
});

const stepActionSchema = z.looseObject({
  tool_calls: z.array(z.looseObject({ name: z.string(), input: z.unknown() })),
});

/** What the episode recorded in `tasks.result` (osworld-task handler). */
const episodeResultSchema = z.looseObject({
  bytebot_task_id: z.string().optional(),
  start_time: z.string().optional(),
  end_time: z.string().optional(),
});

export async function exportOsworldLogs(db: Database, runId: string, outDir: string, artifactSettings: ArtifactSettings = {}): Promise<OsworldLogsExport> {
  const run = await runsRepository(db).get(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  if (run.benchmark !== 'osworld') {
    throw new UsageError(`run ${runId} is a ${run.benchmark} run; --format osworld-logs exports OSWorld runs only`);
  }
  const tasks = await tasksRepository(db).listByRun(runId);
  const settled = tasks.filter((task) => task.status !== 'queued' && task.status !== 'running');
  const resolvedOutDir = path.resolve(outDir);
  const finalJson = await writeOsworldLogs(resolvedOutDir, {
    benchmark_config: benchmarkConfigOf(run, tasks.length),
    started_at: formatPythonUtcTimestamp((run.started_at ?? run.created_at).getTime()),
    finished_at: formatPythonUtcTimestamp(runFinishedAt(run, settled).getTime()),
    tasks: logTasks(db, settled, artifactSettings),
  });
  return { outDir: resolvedOutDir, finalJson, exported: settled.length, unfinished: tasks.length - settled.length };
}

/**
 * The original's keys (max_tasks, max_steps, model, dataset, domain) where a run has their meaning;
 * no poll_interval or api_url, since a run is followed by events on many stacks.
 */
function benchmarkConfigOf(run: Run, taskCount: number): Record<string, unknown> {
  const config = runConfigSchema.parse(run.config);
  return {
    max_tasks: taskCount,
    max_steps: config.max_steps ?? 100,
    // null: each stack ran its first model, as the original does without --model.
    model: run.model,
    dataset: config.source ?? null,
    domain: config.domains?.join(',') ?? 'all',
    stall_timeout_seconds: config.stall_timeout_seconds ?? 300,
    run_id: run.id,
    run_name: run.name,
    code_version: run.code_version,
  };
}

function runFinishedAt(run: Run, settled: readonly Task[]): Date {
  if (run.finished_at) return run.finished_at;
  const ends = settled.map((task) => task.finished_at?.getTime()).filter((at): at is number => at !== undefined);
  return ends.length > 0 ? new Date(Math.max(...ends)) : new Date();
}

/** One task at a time, so a large run's steps and screenshots are never all in memory. */
async function* logTasks(db: Database, tasks: readonly Task[], artifactSettings: ArtifactSettings): AsyncIterable<OsworldLogTask> {
  const steps = stepsRepository(db);
  for (const task of tasks) {
    const recorded = episodeResultSchema.safeParse(task.result ?? {});
    const result = recorded.success ? recorded.data : {};
    const startMs = (task.started_at ?? task.finished_at ?? new Date(0)).getTime();
    const endMs = (task.finished_at ?? task.started_at ?? new Date(0)).getTime();
    // Only the final attempt's steps: an earlier attempt was a run that did not count.
    const rows = task.attempts > 0 ? await steps.listByTask(task.run_id, task.task_id, task.attempts) : [];
    yield {
      task_id: task.task_id,
      domain: task.domain,
      instruction: task.instruction,
      bytebot_task_id: result.bytebot_task_id ?? task.external_id ?? '',
      status: task.status,
      final_api_status: task.final_api_status ?? (task.status === 'cancelled' ? 'CANCELLED' : 'UNKNOWN'),
      total_steps: task.total_steps,
      start_time: result.start_time ?? formatPythonUtcTimestamp(startMs),
      end_time: result.end_time ?? formatPythonUtcTimestamp(endMs),
      // The same rounding as the run summary, so final.json and `scheduler aggregate` agree.
      duration_seconds: roundLikePython((task.duration_ms ?? 0) / 1000, 1),
      error_message: task.error,
      steps: rows.map((row) => logStep(task, row, artifactSettings)),
    };
  }
}

function logStep(task: Task, row: Step, artifactSettings: ArtifactSettings): OsworldLogStep {
  const action = stepActionSchema.safeParse(row.action);
  const uri = row.screenshot_uri;
  return {
    step_number: row.step,
    timestamp: row.at.toISOString(),
    message_id: row.external_id ?? '',
    tool_calls: action.success ? action.data.tool_calls.map((call) => ({ name: call.name, input: call.input ?? {} })) : [],
    text_content: row.text ?? '',
    screenshot: uri === null ? null : () => readScreenshot(task, row.step, uri, artifactSettings),
  };
}

async function readScreenshot(task: Task, step: number, uri: string, artifactSettings: ArtifactSettings): Promise<Uint8Array> {
  try {
    return await readArtifact(uri, artifactSettings);
  } catch (error) {
    throw new Error(`the screenshot of task ${task.task_id} step ${step} cannot be read from the artifact store (${uri}): ${errorMessage(error)}`);
  }
}
