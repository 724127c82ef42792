import type { StepRecord } from '@benchfleet/benchmark-kit';
import type { AttemptUsage } from '@benchfleet/db';

/**
 * What an attempt has spent, for an outcome the episode could not return (a fault, a spend limit):
 * the running totals it told (`recordUsage`), else what its steps recorded.
 */
export class AttemptSpend {
  private told: AttemptUsage | undefined;
  private readonly fromSteps = { tokensIn: 0, tokensOut: 0, costUsd: 0 as number | null };

  addStep(step: Pick<StepRecord, 'tokens_in' | 'tokens_out' | 'cost_usd'>): void {
    const tokensIn = Number(step.tokens_in ?? 0);
    const tokensOut = Number(step.tokens_out ?? 0);
    this.fromSteps.tokensIn += tokensIn;
    this.fromSteps.tokensOut += tokensOut;
    // A step that used tokens without a known cost makes the whole cost unknown.
    if (tokensIn + tokensOut > 0)
      this.fromSteps.costUsd =
        this.fromSteps.costUsd === null || step.cost_usd == null
          ? null
          : this.fromSteps.costUsd + step.cost_usd;
  }

  /** Running totals told by the episode: false for a late report of an earlier (smaller) total. */
  tell(usage: AttemptUsage): boolean {
    const told = this.told;
    if (told && told.tokensIn + told.tokensOut > usage.tokensIn + usage.tokensOut) return false;
    this.told = usage;
    return true;
  }

  soFar(): AttemptUsage {
    if (this.told) return this.told;
    // No step that used tokens: nothing says what the attempt spent (unknown, not $0).
    const used = this.fromSteps.tokensIn + this.fromSteps.tokensOut > 0;
    return { ...this.fromSteps, costUsd: used ? this.fromSteps.costUsd : null };
  }
}
