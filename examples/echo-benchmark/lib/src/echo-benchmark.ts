import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { flag, nonNegativeInteger, parsedText, positiveInteger } from '@benchfleet/core';
import {
  defineBenchmark,
  type BenchmarkOutcome,
  type BenchmarkScorer,
  type BenchmarkTaskContext,
} from '@benchfleet/benchmark-kit';
import { defineTaskJob } from '@benchfleet/queue';
import { echoMigrations } from '../migrations/index.js';
import { EchoAnswersRepository } from './echo-answers-repository.js';
import { echoTaskDetail } from './echo-task-detail.js';
import { echoTools } from './echo-tools.js';

// The echo benchmark: the smallest complete benchmark, and the README's recipe for a new one.
// Task i of a run takes 1 + i % 3 steps and echoes its instruction when i is even (scored a
// success), says nothing when odd (scored failed). Each attempt's answer also goes to its own
// table, `echo_answers`, which its dashboard panel reads.

/** Owns `runs.config`: its defaults are the only ones. */
const runConfig = z.object({ step_ms: z.number().int().nonnegative().default(20) });
/** Owns `tasks.spec`. */
const taskSpec = z.object({
  steps: z.number().int().nonnegative(),
  outcome: z.enum(['success', 'failed']),
});
/** Owns `tasks.result`: what an episode records beside its outcome. */
const taskResult = z.object({ echoed: z.number().int() });

/** `scheduler enqueue`'s echo flags: each takes the text typed; `plan()` gets them parsed. */
const enqueueFlags = z.object({
  echoTasks: flag(parsedText(positiveInteger).optional(), {
    flag: '--echo-tasks <n>',
    description: 'echo: how many tasks (default 4)',
  }),
  echoStepMs: flag(parsedText(nonNegativeInteger).optional(), {
    flag: '--echo-step-ms <ms>',
    description: 'echo: milliseconds per step (default 20)',
  }),
});

/** `worker-echo`'s own flags, besides those every worker has (--worker-id, --grace-s, metrics). */
const workerFlags = z.object({
  concurrency: flag(z.coerce.number().int().min(1).max(64).default(4), {
    flag: '--concurrency <n>',
    env: 'BENCHFLEET_CONCURRENCY',
    description: 'tasks at once (default 4)',
  }),
});

type EchoContext = BenchmarkTaskContext<z.output<typeof runConfig>, z.output<typeof taskSpec>>;

/** One echo task: its scripted steps, one every `step_ms`, its answer stored, then its outcome. */
export async function runEchoEpisode(
  context: EchoContext,
  answers: EchoAnswersRepository,
): Promise<BenchmarkOutcome<z.output<typeof taskResult>>> {
  for (let step = 1; step <= context.spec.steps; step += 1) {
    // The signal aborts on cancel, deadline and shutdown: the attempt ends as that says.
    await sleep(context.config.step_ms, undefined, { signal: context.signal });
    context.recordStep({
      step,
      action: JSON.stringify({ echo: step }),
      text: `${context.task.instruction}: step ${step}`,
    });
  }
  const answer = context.spec.outcome === 'success' ? context.task.instruction : '(silence)';
  // Keyed by attempt: a redelivered attempt writes nothing twice, a retry has a row of its own.
  await answers.record({
    run_id: context.task.run_id,
    task_id: context.task.task_id,
    attempt: context.attempt,
    answer,
    steps: context.spec.steps,
  });
  // It records what it said; whether that scores is the scorer's to decide (`score` below).
  return {
    status: context.spec.outcome,
    totalSteps: context.spec.steps,
    answer,
    costUsd: 0,
    result: { echoed: context.spec.steps },
  };
}

/** Its scorer, apart from the episode: applied when a task settles, and by `scheduler rescore`. */
const echoScorer: BenchmarkScorer<
  z.output<typeof runConfig>,
  z.output<typeof taskSpec>,
  z.output<typeof taskResult>
> = {
  version: 'echo-exact-1',
  score: async (record) => {
    const success = record.answer === record.instruction;
    return { success, reward: success ? 1 : 0, details: { answer: record.answer } };
  },
};

export const echoBenchmark = defineBenchmark({
  name: 'echo',
  title: 'Echo (example)',
  job: defineTaskJob({
    name: 'echo-task',
    queue: 'echo',
    attempts: 3,
    backoff: { type: 'fixed', delay: 200 },
    deadlineMs: 5 * 60_000,
  }),
  runConfig,
  taskSpec,
  taskResult,
  success: { label: 'scripted success', meaning: "the task's script ended in success" },
  rewardIsPartial: false,
  // The generic step view (no trajectory panel of its own), and its answers panel below it.
  display: { workerCommand: 'npx worker-echo', taskDetail: echoTaskDetail },
  enqueueFlags,
  domains: async () => ({ names: ['even', 'odd'] }),
  async plan(input) {
    const count = Math.min(input.flags.echoTasks ?? 4, input.maxTasks ?? Number.MAX_SAFE_INTEGER);
    return {
      name: input.runName ?? `echo-${count}`,
      config: input.flags.echoStepMs !== undefined ? { step_ms: input.flags.echoStepMs } : {},
      model: null,
      agent: { kind: 'script' },
      tasks: Array.from({ length: count }, (_, i) => ({
        taskId: `echo-${String(i).padStart(3, '0')}`,
        domain: i % 2 === 0 ? 'even' : 'odd',
        instruction: `say ${i}`,
        spec: {
          steps: 1 + (i % 3),
          outcome: i % 2 === 0 ? ('success' as const) : ('failed' as const),
        },
      })).filter((task) => input.domains.length === 0 || input.domains.includes(task.domain)),
    };
  },
  // Its own numbers in the run summary, from results its schema has parsed.
  scores: (tasks) => ({
    echoed_steps: tasks.reduce((sum, task) => sum + (task.result?.echoed ?? 0), 0),
  }),
  // Success decided from what the episode recorded (its answer), never inside the episode.
  score: echoScorer,
  exporters: {},
  tools: echoTools,
  // Its own table, `echo_answers`: the registry merges its migrations with the core's.
  migrations: echoMigrations,
  // Every statement it builds, for the SQL snapshot test (loaded only by that test).
  sqlStatements: async () => (await import('./echo-sql-statements.js')).echoSqlStatements,
  worker: {
    command: 'worker-echo',
    description: 'runs echo tasks: scripted steps, then the scripted outcome',
    flags: workerFlags,
    workerId: { default: () => `echo-${process.pid}`, shown: 'echo-<pid>' },
    graceS: 10,
    concurrency: (flags) => flags.concurrency,
    setup: async ({ db }) => {
      const answers = new EchoAnswersRepository(db);
      return { episode: (context) => runEchoEpisode(context, answers) };
    },
  },
});
