import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { flag, parsedText, positiveInteger } from '@benchfleet/core';
import {
  defineBenchmark,
  type BenchmarkTaskContext,
  type BenchmarkOutcome,
} from '@benchfleet/benchmark-kit';
import { defineTaskJob } from '@benchfleet/queue';

// A third benchmark, defined only in test code, to prove that adding one needs no change to the
// scheduler, queue, core or db code: a descriptor, a worker entry and a registry that lists it.
// Task i of a run takes 1 + i % 3 steps and ends in success when i is even, failed when odd.

const runConfig = z.object({ step_ms: z.number().int().nonnegative().default(20) });
const taskSpec = z.object({
  steps: z.number().int().nonnegative(),
  outcome: z.enum(['success', 'failed']),
});
const taskResult = z.object({ echoed: z.number().int() });

function nonNegativeInteger(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error('expected a whole number of milliseconds, e.g. 20');
  return Number(text);
}

export const echoBenchmark = defineBenchmark({
  name: 'echo',
  title: 'Echo (test)',
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
  display: {
    trajectory: 'pages',
    workerCommand: 'node --import tsx echo-worker.entry.ts',
    stopReasons: {},
    finalStatuses: {},
  },
  enqueueFlags: z.object({
    echoTasks: flag(parsedText(positiveInteger).optional(), {
      flag: '--echo-tasks <n>',
      description: 'echo: how many tasks (default 4)',
    }),
    echoStepMs: flag(parsedText(nonNegativeInteger).optional(), {
      flag: '--echo-step-ms <ms>',
      description: 'echo: milliseconds per step (default 20)',
    }),
  }),
  domains: async () => ({ names: ['even', 'odd'] }),
  async plan(input) {
    const { flags } = input;
    const count = Math.min(flags.echoTasks ?? 4, input.maxTasks ?? Number.MAX_SAFE_INTEGER);
    return {
      name: input.runName ?? `echo-${count}`,
      config: flags.echoStepMs !== undefined ? { step_ms: flags.echoStepMs } : {},
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
  exporters: {},
  worker: {
    command: 'worker-echo',
    description: 'runs echo tasks: scripted steps, then the scripted outcome',
    flags: z.object({}),
    workerId: { default: () => `echo-${process.pid}`, shown: 'echo-<pid>' },
    graceS: 2,
    concurrency: () => 4,
    setup: async () => ({ episode: runEchoEpisode }),
  },
});

type EchoContext = BenchmarkTaskContext<z.output<typeof runConfig>, z.output<typeof taskSpec>>;

/** The echo episode: its scripted steps, one every `step_ms`, then its scripted outcome. */
export async function runEchoEpisode(
  context: EchoContext,
): Promise<BenchmarkOutcome<z.output<typeof taskResult>>> {
  for (let step = 1; step <= context.spec.steps; step += 1) {
    await sleep(context.config.step_ms, undefined, { signal: context.signal });
    context.recordStep({
      step,
      action: JSON.stringify({ echo: step }),
      text: `${context.task.instruction}: step ${step}`,
    });
  }
  const success = context.spec.outcome === 'success';
  return {
    status: context.spec.outcome,
    totalSteps: context.spec.steps,
    reward: success ? 1 : 0,
    success,
    costUsd: 0,
    result: { echoed: context.spec.steps },
  };
}
