import { z } from 'zod';
import { flag, parsedText, positiveInteger, UsageError } from '@benchfleet/core';
import { defineBenchmark } from '@benchfleet/benchmark-kit';
import { defineTaskJob } from '@benchfleet/queue';
import { osworldTaskSchema } from './osworld-dataset.js';
import type { OsworldGraderChoice } from './osworld-grade.js';
import { defaultOsworldSource, loadOsworldDataset } from './osworld-dataset-loading.js';
import {
  osworldAttemptPhases,
  osworldRunDetail,
  osworldTaskDetail,
  osworldTaskGrade,
} from './osworld-display.js';
import { osworldLogsExporter } from './osworld-logs-export.js';
import { osworldGrading } from './osworld-run-grading.js';
import {
  assertGradable,
  assertGradingWorkers,
  gradingConfig,
  onlyGradedTasks,
} from './osworld-grade-enqueue.js';
import { osworldRunConfigSchema, osworldTaskResultSchema } from './osworld-run-config.js';
import { osworldTools } from './osworld-tools.js';
import { summarizeOsworldAction } from './osworld-action-summary.js';
import { osworldWorker } from './osworld-worker.js';
import { OSWORLD_DOMAINS } from './osworld-dataset.js';
import { osworldMigrations } from '../migrations/index.js';

/** The model Bytebot is asked to use, in the shape its API takes. */
const modelFlagSchema = z
  .object({
    provider: z.string().min(1),
    name: z.string().min(1),
    title: z.string().min(1),
    contextWindow: z.number().int().positive().optional(),
  })
  .strict();

const MODEL_EXAMPLE = `'{"provider":"anthropic","name":"claude-sonnet-4","title":"Claude Sonnet 4"}'`;

function parseModelFlag(text: string): z.output<typeof modelFlagSchema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`expected JSON such as ${MODEL_EXAMPLE}`);
  }
  const parsed = modelFlagSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = issue.path.join('.');
      if (issue.code === 'invalid_type' && field === '') return 'expected a JSON object';
      if (issue.code === 'invalid_type' && issue.input === undefined)
        return `missing field "${field}"`;
      if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.join(', ')}`;
      return `${field}: ${issue.message}`;
    });
    throw new Error(`${problems.join('; ')}; expected ${MODEL_EXAMPLE}`);
  }
  return parsed.data;
}

/** `scheduler enqueue`'s OSWorld flags. */
const osworldEnqueueFlags = z.object({
  dataset: flag(z.string().optional(), {
    flag: '--dataset <path>',
    description:
      'OSWorld: an extracted dataset JSON (scheduler osworld extract) or an OSWorld directory',
  }),
  osworldDir: flag(z.string().optional(), {
    flag: '--osworld-dir <dir>',
    env: 'OSWORLD_DIR',
    description: 'OSWorld: a checkout or its evaluation_examples directory',
  }),
  stallTimeoutS: flag(parsedText(positiveInteger).optional(), {
    flag: '--stall-timeout-s <n>',
    description:
      'OSWorld: cancel a task after this many seconds without a new message (default 300)',
  }),
  model: flag(parsedText(parseModelFlag).optional(), {
    flag: '--model <json>',
    description: `OSWorld: the Bytebot model, e.g. ${MODEL_EXAMPLE} (default: the first the stack offers)`,
  }),
  grade: flag(parsedText((text) => text !== 'false').optional(), {
    flag: '--grade',
    description:
      "OSWorld: a graded run: each task set up from its config on a fresh desktop and its end state scored by OSWorld's evaluators, shown beside the agent's word (needs workers with --desktop-server-url)",
  }),
  onlyGradedTasks: flag(parsedText((text) => text !== 'false').optional(), {
    flag: '--only-graded-tasks',
    description: 'OSWorld --grade: leave out the tasks outside the graded (phase-1) set',
  }),
  grader: flag(z.enum(['port', 'upstream', 'both']).optional(), {
    flag: '--grader <port|upstream|both>',
    description:
      "OSWorld --grade: which grader scores the tasks: port (benchfleet's TypeScript port, 71 tasks), upstream (OSWorld's own evaluators in the grader image, needs workers with --grader-url), both (upstream's grade, compared with the port's where it covers the task); default: the port where it covers the task, else upstream",
  }),
  gradeWorkerCheck: flag(parsedText((text) => text !== 'false').optional(), {
    flag: '--no-grade-worker-check',
    description:
      'OSWorld --grade: enqueue even though the live OSWorld workers have no desktop server (for workers still to come)',
  }),
});

/**
 * OSWorld desktop tasks, each run by the Bytebot agent of one worker's stack with the original
 * Bytebot OSWorld scripts' semantics. Success is what the agent reports (COMPLETED): OSWorld's
 * evaluators, which grade the desktop's final state, are not run.
 */
export const osworldBenchmark = defineBenchmark({
  name: 'osworld',
  title: 'OSWorld (Bytebot)',
  // Infra faults (a dead stack, Postgres down) are retried slowly: a stack restart takes minutes.
  job: defineTaskJob({
    name: 'osworld-task',
    queue: 'osworld',
    attempts: 4,
    backoff: { type: 'exponential', delay: 30_000 },
    deadlineMs: 3 * 60 * 60 * 1000,
  }),
  runConfig: osworldRunConfigSchema,
  taskSpec: osworldTaskSchema,
  taskResult: osworldTaskResultSchema,
  success: {
    label: 'agent-reported success',
    meaning:
      "the Bytebot agent reported the task COMPLETED; OSWorld's evaluation of the desktop is run only in graded runs, whose score is shown beside it",
  },
  rewardIsPartial: false,
  display: {
    trajectory: 'screenshots',
    workerCommand: 'npx worker-osworld --bytebot-url http://127.0.0.1:9991 --stack-id stack-1',
    stopReasons: {
      end_status: 'Bytebot ended the task with a terminal status',
      step_limit: 'the step limit was reached: the Bytebot task was cancelled',
      stalled: 'no new message within the stall timeout: the Bytebot task was cancelled',
      create_failed: 'Bytebot refused to create the task',
    },
    finalStatuses: {
      COMPLETED: 'the agent reported the task done (counted as success)',
      FAILED: 'the agent or its model failed',
      NEEDS_HELP: 'the agent asked a human for help (counted as failed)',
      NEEDS_REVIEW: 'the agent asked for its result to be reviewed (counted as failed)',
      CANCELLED: 'cancelled (step limit, stall, or the run was cancelled)',
      CREATE_FAILED: 'the task could not be created on the stack',
    },
    // Graded runs: the grade beside the agent's word, the run's claimed × graded table, the trace.
    grade: osworldTaskGrade,
    runDetail: osworldRunDetail,
    taskDetail: osworldTaskDetail,
    phases: osworldAttemptPhases,
  },
  domains: async () => ({ names: OSWORLD_DOMAINS }),
  enqueueFlags: osworldEnqueueFlags,
  async plan(input, context) {
    const { flags } = input;
    const source = flags.dataset ?? flags.osworldDir ?? defaultOsworldSource(context.env);
    const { dataset } = await loadOsworldDataset(
      source,
      input.domains.length ? { domains: input.domains } : {},
    );
    const grade = flags.grade === true;
    const stray = !grade
      ? flags.onlyGradedTasks
        ? '--only-graded-tasks'
        : flags.gradeWorkerCheck === false
          ? '--no-grade-worker-check'
          : flags.grader !== undefined
            ? '--grader'
            : null
      : null;
    if (stray) throw new UsageError(`${stray} is for graded runs: add --grade, or drop it`);
    let tasks = grade && flags.onlyGradedTasks ? onlyGradedTasks(dataset.tasks) : dataset.tasks;
    if (input.maxTasks !== undefined) tasks = tasks.slice(0, input.maxTasks);
    if (grade && tasks.length === 0)
      throw new UsageError(
        `--grade --only-graded-tasks: none of the ${dataset.tasks.length} task(s) of ${source} is in the graded (phase-1) set, whose domains are vs_code, thunderbird, os and multi_apps`,
      );
    const grader: OsworldGraderChoice = flags.grader ?? 'auto';
    if (grade) assertGradable(tasks, grader);
    if (tasks.length === 0)
      throw new UsageError(
        `no OSWorld task matches (source ${source}, domains ${input.domains.join(',') || 'all'})`,
      );
    return {
      name: input.runName ?? `osworld-${input.domains.join('+') || 'all'}`,
      config: {
        source,
        domains: input.domains.length ? [...input.domains] : null,
        ...(input.maxTasks !== undefined ? { max_tasks: input.maxTasks } : {}),
        ...(input.maxSteps !== undefined ? { max_steps: input.maxSteps } : {}),
        ...(flags.stallTimeoutS !== undefined
          ? { stall_timeout_seconds: flags.stallTimeoutS }
          : {}),
        ...(grade ? { grade: true, grader, grading: gradingConfig() } : {}),
      },
      model: flags.model ?? null,
      agent: { kind: 'bytebot' },
      tasks: tasks.map((task) => ({
        taskId: task.task_id,
        domain: task.domain,
        instruction: task.instruction,
        spec: task,
      })),
    };
  },
  async preflight(run, context) {
    if (run.config.grade && run.flags.gradeWorkerCheck !== false)
      await assertGradingWorkers(context.liveWorkers, 'osworld');
  },
  exporters: { 'osworld-logs': osworldLogsExporter },
  grading: osworldGrading,
  // Loaded when a regrade runs: the metrics and their Python helpers are not for every command.
  regrade: {
    regrade: async (context) =>
      (await import('./osworld-regrade-run.js')).osworldRegrader.regrade(context),
  },
  tools: osworldTools,
  migrations: osworldMigrations,
  sqlStatements: async () => (await import('./osworld-sql-statements.js')).osworldSqlStatements,
  summarizeAction: summarizeOsworldAction,
  worker: osworldWorker,
});
