import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TaskForNumbers } from '@benchfleet/benchmark-kit';
import { buildOsworldFinalJson, type OsworldFinalJson } from './osworld-summary.js';
import { roundLikePython } from '@benchfleet/core';
import { formatPythonJson, pythonFloat } from './python-compatible-format.js';

// Writes the directory layout of the original benchmark (`osworld-logs/`) from plain data:
//   <task_id>/step_NNN.json, <task_id>/screenshots/step_NNN.png, <task_id>/result.json, final.json

type OsworldScreenshotSource = Uint8Array | null | (() => Promise<Uint8Array | null>);

export interface OsworldLogStep {
  step_number: number;
  timestamp: string;
  message_id: string;
  tool_calls: { name: string; input: unknown }[];
  text_content: string;
  /** PNG bytes, or a function that reads them (so a large run is not held in memory). */
  screenshot?: OsworldScreenshotSource;
}

export interface OsworldLogTask {
  task_id: string;
  domain: string;
  instruction: string;
  bytebot_task_id: string;
  status: string;
  final_api_status: string;
  total_steps: number;
  start_time: string;
  end_time: string;
  /** Default: end − start rounded to 0.1 s, or 0 for a failed create (as the original). */
  duration_seconds?: number;
  error_message: string | null;
  /**
   * A graded run's grade of the task (null: none recorded), written into result.json after the
   * original's fields; absent for a run that is not graded, whose files stay the original's.
   */
  graded?: Record<string, unknown> | null;
  steps: Iterable<OsworldLogStep> | AsyncIterable<OsworldLogStep>;
}

export interface OsworldLogRun {
  benchmark_config: Record<string, unknown>;
  started_at: string;
  finished_at: string;
  tasks: Iterable<OsworldLogTask> | AsyncIterable<OsworldLogTask>;
  /** A graded run's graded numbers, written into final.json after the original's fields. */
  graded?: unknown;
}

const SAFE_TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const STEP_FILE = /^step_\d+\.(json|png)$/;

/** Writes the run's osworld-logs directory and returns the final.json content. */
export async function writeOsworldLogs(
  outDir: string,
  run: OsworldLogRun,
): Promise<OsworldFinalJson> {
  await mkdir(outDir, { recursive: true });
  const results: TaskForNumbers[] = [];
  const written = new Set<string>();
  // The original records a create that failed with `duration_seconds=0`, an int, and no result.json.
  const createFailed = new Set<string>();
  for await (const task of run.tasks) {
    if (!SAFE_TASK_ID.test(task.task_id))
      throw new Error(`Task id ${JSON.stringify(task.task_id)} cannot name a directory`);
    if (written.has(task.task_id))
      throw new Error(`Task ${task.task_id} appears twice; osworld-logs is keyed by task id`);
    written.add(task.task_id);
    const taskDir = path.join(outDir, task.task_id);
    const screenshotsDir = path.join(taskDir, 'screenshots');
    await mkdir(screenshotsDir, { recursive: true });
    await removeStepFiles(taskDir);
    await removeStepFiles(screenshotsDir);

    for await (const step of task.steps) await writeStep(taskDir, step);

    const durationSeconds = task.duration_seconds ?? defaultDurationSeconds(task);
    const failedCreate = task.final_api_status === 'CREATE_FAILED';
    if (failedCreate) createFailed.add(task.task_id);
    const result = {
      task_id: task.task_id,
      domain: task.domain,
      instruction: task.instruction,
      bytebot_task_id: task.bytebot_task_id,
      status: task.status,
      final_api_status: task.final_api_status,
      total_steps: task.total_steps,
      start_time: task.start_time,
      end_time: task.end_time,
      duration_seconds: durationSeconds,
      error_message: task.error_message,
    };
    // run_single_task returns before save_result_json when the create fails.
    if (!failedCreate)
      await writeFile(
        path.join(taskDir, 'result.json'),
        formatPythonJson({
          ...result,
          duration_seconds: pythonFloat(durationSeconds),
          ...(task.graded !== undefined ? { graded: pythonTypedGrade(task.graded) } : {}),
        }),
      );
    results.push({ ...result, duration_seconds: durationSeconds });
  }
  const finalJson = buildOsworldFinalJson({
    benchmark_config: run.benchmark_config,
    started_at: run.started_at,
    finished_at: run.finished_at,
    results,
  });
  const typed = withPythonTypes(finalJson, results, createFailed) as Record<string, unknown>;
  await writeFile(
    path.join(outDir, 'final.json'),
    formatPythonJson(run.graded !== undefined ? { ...typed, graded: run.graded } : typed),
  );
  return finalJson;
}

/**
 * final.json with the numbers the original's `compute_final_stats` holds as floats marked so:
 * its rates and averages are `round(…)` of float divisions, and `0` (an int) only where it had
 * nothing to divide; durations are `round(seconds, 1)`, but a failed create's literal `0`.
 */
function withPythonTypes(
  final: OsworldFinalJson,
  results: readonly TaskForNumbers[],
  createFailed: ReadonlySet<string>,
): unknown {
  const float = (value: number, isFloat: boolean) => (isFloat ? pythonFloat(value) : value);
  const scored = (of: readonly TaskForNumbers[]) => of.some((result) => result.status !== 'error');
  const { summary } = final;
  return {
    ...final,
    summary: {
      ...summary,
      success_rate: float(summary.success_rate, summary.total_tasks > 0),
      avg_steps: float(summary.avg_steps, scored(results)),
      avg_duration_seconds: float(summary.avg_duration_seconds, scored(results)),
      longest_task: summary.longest_task && {
        ...summary.longest_task,
        duration_seconds: pythonFloat(summary.longest_task.duration_seconds),
      },
    },
    per_domain: Object.fromEntries(
      Object.entries(final.per_domain).map(([domain, numbers]) => [
        domain,
        {
          ...numbers,
          success_rate: float(numbers.success_rate, numbers.total > 0),
          avg_steps: float(
            numbers.avg_steps,
            scored(results.filter((result) => result.domain === domain)),
          ),
        },
      ]),
    ),
    total_duration_seconds: pythonFloat(final.total_duration_seconds),
    tasks: final.tasks.map((task) => ({
      ...task,
      duration_seconds: float(task.duration_seconds, !createFailed.has(task.task_id)),
    })),
  };
}

/** A grade whose score OSWorld returned as a float is written as one (`1.0`), as Python would. */
function pythonTypedGrade(grade: Record<string, unknown> | null): unknown {
  if (grade === null || typeof grade['score'] !== 'number' || grade['python_type'] !== 'float')
    return grade;
  return { ...grade, score: pythonFloat(grade['score']) };
}

async function writeStep(taskDir: string, step: OsworldLogStep): Promise<void> {
  const name = `step_${String(step.step_number).padStart(3, '0')}`;
  const source = step.screenshot ?? null;
  const screenshot = typeof source === 'function' ? await source() : source;
  const screenshotFile = screenshot ? `screenshots/${name}.png` : null;
  if (screenshot && screenshotFile) await writeFile(path.join(taskDir, screenshotFile), screenshot);
  const stepJson = {
    step_number: step.step_number,
    timestamp: step.timestamp,
    message_id: step.message_id,
    tool_calls: step.tool_calls.map((call) => ({ name: call.name, input: call.input })),
    text_content: step.text_content,
    has_screenshot: screenshot !== null,
    screenshot_file: screenshotFile,
  };
  await writeFile(path.join(taskDir, `${name}.json`), formatPythonJson(stepJson));
}

function defaultDurationSeconds(task: OsworldLogTask): number {
  if (task.final_api_status === 'CREATE_FAILED') return 0;
  return roundLikePython((Date.parse(task.end_time) - Date.parse(task.start_time)) / 1000, 1);
}

/** A re-export must not leave steps of an earlier, longer export behind. */
async function removeStepFiles(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    if (STEP_FILE.test(entry)) await rm(path.join(dir, entry));
  }
}
