import { PermanentError } from '@benchfleet/core';
import { RunsRepository, type Run } from '@benchfleet/db';
import type { JobHandler, TaskPayload } from '@benchfleet/queue';
import {
  parseOwned,
  type BenchmarkDescriptor,
  type BenchmarkOutcome,
  type BenchmarkScorer,
  type BenchmarkTaskContext,
} from '@benchfleet/benchmark-kit';
import { scoredOutcome } from './settle-score.js';
import { createTaskJobHandler, type TaskProcessorDeps } from './task-processor.js';

/**
 * A benchmark's task job handler: the run's config (read once per run) and the task's spec come
 * through the benchmark's own schemas, so the episode gets typed values. A config or spec that
 * does not parse is a permanent fault, recorded once with the schema's message. An agent outcome
 * is scored by the worker's scorer (`episodes.score`) or else the descriptor's.
 */
export function createBenchmarkTaskHandler<Config, ConfigInput, Spec, Result>(
  benchmark: BenchmarkDescriptor<Config, ConfigInput, Spec, Result>,
  deps: TaskProcessorDeps,
  episodes: {
    episode(context: BenchmarkTaskContext<Config, Spec>): Promise<BenchmarkOutcome<Result>>;
    /** The scorer its tasks settle with, reading what the worker holds (default: the descriptor's). */
    readonly score?: BenchmarkScorer<Config, Spec, Result>;
  },
): JobHandler<TaskPayload> {
  const scorer = episodes.score ?? benchmark.score;
  const runs = new Map<string, Promise<{ run: Run; config: Config }>>();
  const runOf = (runId: string) => {
    let loading = runs.get(runId);
    if (!loading) {
      loading = (async () => {
        const run = await new RunsRepository(deps.db).get(runId);
        if (!run) throw new PermanentError(`run ${runId} does not exist`);
        if (run.benchmark !== benchmark.name)
          throw new PermanentError(`run ${runId} is a ${run.benchmark} run, not ${benchmark.name}`);
        return {
          run,
          config: parseOwned(
            benchmark.runConfig,
            run.config,
            `the ${benchmark.name} config of run ${runId}`,
          ),
        };
      })();
      // A transient failure (Postgres down) is asked again by the next task.
      loading.catch(() => runs.delete(runId));
      runs.set(runId, loading);
    }
    return loading;
  };
  return createTaskJobHandler(
    deps,
    async (context) => {
      const { run, config } = await runOf(context.job.payload.runId);
      const spec = parseOwned(
        benchmark.taskSpec,
        context.task.spec,
        `the spec of task ${context.task.task_id}`,
      );
      const benchmarkContext = { ...context, run, config, spec };
      // The episode records what it did; the benchmark's scorer decides what it scored.
      return scoredOutcome(
        scorer,
        deps.db,
        benchmarkContext,
        await episodes.episode(benchmarkContext),
      );
    },
    benchmark.name,
    benchmark.summarizeAction,
  );
}
