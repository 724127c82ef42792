import type {
  BenchmarkOutcome,
  BenchmarkScorer,
  BenchmarkTaskContext,
} from '@benchfleet/benchmark-kit';
import type { Database } from '@benchfleet/db';

/**
 * The outcome an attempt settles with: an agent outcome (success or failed) scored by the
 * benchmark's scorer from what the episode recorded, its success, reward and status the score's.
 * Faults, cancellations and errors are never scored; without a scorer the episode's word stands.
 */
export async function scoredOutcome<Config, Spec, Result>(
  scorer: BenchmarkScorer<Config, Spec, Result> | undefined,
  db: Database,
  context: BenchmarkTaskContext<Config, Spec>,
  outcome: BenchmarkOutcome<Result>,
): Promise<BenchmarkOutcome<Result>> {
  if (!scorer || (outcome.status !== 'success' && outcome.status !== 'failed')) return outcome;
  const score = await scorer.score(
    {
      runId: context.run.id,
      taskId: context.task.task_id,
      instruction: context.task.instruction,
      config: context.config,
      spec: context.spec,
      result: outcome.result ?? null,
      answer: outcome.answer ?? null,
      finalApiStatus: outcome.finalApiStatus ?? null,
      totalSteps: outcome.totalSteps,
    },
    { db },
  );
  return {
    ...outcome,
    status: score.success ? 'success' : 'failed',
    success: score.success,
    reward: score.reward,
  };
}
