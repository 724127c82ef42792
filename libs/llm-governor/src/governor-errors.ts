import { PermanentError, SpendLimitReachedError, TransientError } from '@benchfleet/core';
import type { LlmAttribution } from './llm-lane.js';

export type BudgetScope = 'task' | 'run';

/**
 * A spend limit refused the call (before it, on the estimate, or because an earlier call's real
 * cost reached it). Not an agent failure and not an infra fault: the task stops with stop reason
 * `budget`. Permanent: retrying the task cannot make the money come back.
 */
export class BudgetExceededError extends SpendLimitReachedError {
  override readonly name = 'BudgetExceeded';
  constructor(
    override readonly scope: BudgetScope,
    limitUsd: number,
    /** Spent so far in this scope (real costs of settled calls), without the refused call. */
    readonly spentUsd: number,
    /** What the refused call was estimated to cost; 0 when a settled call reached the limit. */
    readonly estimatedUsd: number,
    readonly attribution: LlmAttribution | undefined,
    /** What the call's attempt had spent (its task's cost when it stops here). */
    attemptSpentUsd = 0,
    /** The run was already fenced at its spend limit (by this or another worker). */
    fenced = false,
  ) {
    super(
      scope,
      limitUsd,
      attemptSpentUsd,
      `the ${scope} spend limit of $${limitUsd} is reached: $${spentUsd.toFixed(6)} spent${fenced ? ' (the run is stopped at its limit)' : estimatedUsd > 0 ? `, the next call is estimated at $${estimatedUsd.toFixed(6)}` : ''}`,
    );
  }
}

/**
 * The governor's Redis did not answer within its deadline. An infra fault: the call is not made
 * (never let through unlimited) and the job is retried.
 */
export class GovernorUnavailableError extends TransientError {
  override readonly name = 'GovernorUnavailableError';
}

/** The call's attempt is not running (an orphan, a cancelled task): refused at once, never sent. */
export class AttemptNotRunningError extends PermanentError {
  override readonly name = 'AttemptNotRunningError';
  constructor(readonly attribution: LlmAttribution) {
    super(
      `no running attempt ${attribution.attempt} of task ${attribution.taskId} in run ${attribution.runId}: the LLM call is refused`,
    );
  }
}

/** A spend limit was given for a model with no price: it cannot be enforced, so nothing is sent. */
export class PriceUnknownError extends PermanentError {
  override readonly name = 'PriceUnknownError';
  constructor(readonly model: string) {
    super(
      `model ${model} has no price, so a spend limit cannot be enforced: add it to the price table or the limits file`,
    );
  }
}

/** The provider asked every worker to wait longer than a call may (Retry-After past the caller's bound). */
export class RateLimitedTooLongError extends TransientError {
  override readonly name = 'RateLimitedTooLongError';
  constructor(
    readonly waitMs: number,
    where: string,
  ) {
    super(`${where} asked the fleet to hold off for ${Math.ceil(waitMs / 1000)} s`);
  }
}
