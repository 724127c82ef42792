import { describe, expect, it } from 'vitest';
import { AttemptSpend } from './attempt-spend.js';

describe('AttemptSpend', () => {
  it('knows nothing of the spend of an attempt whose steps used no tokens (unknown, not $0)', () => {
    const sut = new AttemptSpend();
    sut.addStep({ cost_usd: null });
    expect(sut.soFar()).toEqual({ tokensIn: 0, tokensOut: 0, costUsd: null });
  });

  it("adds up its steps' tokens and costs; one step with tokens and no cost makes the cost unknown", () => {
    const sut = new AttemptSpend();
    sut.addStep({ tokens_in: 100, tokens_out: 20, cost_usd: 0.5 });
    sut.addStep({ tokens_in: 50, tokens_out: 10, cost_usd: 0.25 });
    expect(sut.soFar()).toEqual({ tokensIn: 150, tokensOut: 30, costUsd: 0.75 });
    sut.addStep({ tokens_in: 1, tokens_out: 1, cost_usd: null });
    sut.addStep({ tokens_in: 1, tokens_out: 1, cost_usd: 0.1 });
    expect(sut.soFar()).toEqual({ tokensIn: 152, tokensOut: 32, costUsd: null });
  });

  it('prefers the running totals the episode told, and keeps the larger of two told late', () => {
    const sut = new AttemptSpend();
    sut.addStep({ tokens_in: 100, tokens_out: 20, cost_usd: 0.5 });
    expect(sut.tell({ tokensIn: 300, tokensOut: 40, costUsd: 1.5 })).toBe(true);
    expect(sut.tell({ tokensIn: 200, tokensOut: 30, costUsd: 1 })).toBe(false);
    expect(sut.soFar()).toEqual({ tokensIn: 300, tokensOut: 40, costUsd: 1.5 });
  });
});
