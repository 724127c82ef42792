import { describe, expect, it } from 'vitest';
import {
  compareRuns,
  mcnemarExactPValue,
  pairedBootstrapIntervals,
  pairedTable,
  seededRandom,
  type PairedTaskOutcome,
} from './index.js';

// Every expected value here is computed independently of the code under test: by hand, by exact
// binomial sums in BigInt, or by enumerating every bootstrap resample of a tiny sample.

function binomialCoefficient(n: number, k: number): bigint {
  let value = 1n;
  for (let i = 1; i <= k; i += 1) value = (value * BigInt(n - k + i)) / BigInt(i);
  return value;
}

/** Two-sided exact McNemar p from exact rational arithmetic, to 15 significant digits. */
function exactMcnemar(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let tail = 0n;
  for (let k = 0; k <= Math.min(b, c); k += 1) tail += binomialCoefficient(n, k);
  const scale = 10n ** 18n;
  const p = Number((2n * tail * scale) / 2n ** BigInt(n)) / 1e18;
  return Math.min(1, p);
}

function pair(
  taskId: string,
  successA: boolean,
  successB: boolean,
  rewardA = successA ? 1 : 0,
  rewardB = successB ? 1 : 0,
): PairedTaskOutcome {
  return {
    task_id: taskId,
    domain: 'd',
    status_a: successA ? 'success' : 'failed',
    status_b: successB ? 'success' : 'failed',
    success_a: successA,
    success_b: successB,
    reward_a: rewardA,
    reward_b: rewardB,
  };
}

describe('McNemar exact test', () => {
  it('matches hand-computed tables', () => {
    // b=1, c=6: n=7, P(X<=1) = (1+7)/128, doubled = 0.125
    expect(mcnemarExactPValue(1, 6)).toBeCloseTo(0.125, 15);
    // b=0, c=5: 2 * 1/32
    expect(mcnemarExactPValue(0, 5)).toBeCloseTo(0.0625, 15);
    // b=2, c=8: n=10, P(X<=2) = (1+10+45)/1024 = 56/1024, doubled = 0.109375
    expect(mcnemarExactPValue(2, 8)).toBeCloseTo(0.109375, 15);
    // a balanced table: twice a tail above one half, capped at 1
    expect(mcnemarExactPValue(3, 3)).toBe(1);
    expect(mcnemarExactPValue(0, 0)).toBe(1);
    expect(mcnemarExactPValue(6, 1)).toBe(mcnemarExactPValue(1, 6));
  });

  it('matches exact binomial sums for large tables, where 2^-n underflows a double', () => {
    for (const [b, c] of [
      [40, 60],
      [13, 29],
      [480, 560],
      [700, 800],
    ] as const) {
      const expected = exactMcnemar(b, c);
      expect(Math.abs(mcnemarExactPValue(b, c) - expected) / expected).toBeLessThan(1e-9);
    }
  });

  it('refuses counts that are not counts', () => {
    expect(() => mcnemarExactPValue(-1, 2)).toThrow(RangeError);
    expect(() => mcnemarExactPValue(1.5, 2)).toThrow(RangeError);
  });
});

/** The exact bootstrap distribution of the mean: every one of the n^n ordered resamples, equally likely. */
function exactBootstrapQuantiles(values: number[], level: number): { low: number; high: number } {
  const n = values.length;
  const means: number[] = [];
  const picks = new Array<number>(n).fill(0);
  for (let index = 0; index < n ** n; index += 1) {
    let rest = index;
    for (let i = 0; i < n; i += 1) {
      picks[i] = rest % n;
      rest = Math.floor(rest / n);
    }
    means.push(picks.reduce((sum, pick) => sum + (values[pick] ?? 0), 0) / n);
  }
  means.sort((a, b) => a - b);
  const alpha = (1 - level) / 2;
  // The smallest mean whose cumulative share reaches alpha, and the largest whose upper share does.
  const low = means[Math.ceil(alpha * means.length) - 1] ?? Number.NaN;
  const high = means[Math.floor((1 - alpha) * means.length)] ?? Number.NaN;
  return { low, high };
}

describe('paired bootstrap', () => {
  it('converges on the exact bootstrap quantiles of a small sample', () => {
    // 5 tasks: the exact cumulative shares are 0.0195 at -0.6, 0.0707 at -0.4, 0.9386 at 0.6 and
    // 0.9898 at 0.8, so the 2.5% and 97.5% points sit well inside the atoms -0.4 and 0.8.
    const differences = [1, 0, 0, -1, 1];
    const exact = exactBootstrapQuantiles(differences, 0.95);
    const [interval] = pairedBootstrapIntervals([differences], { resamples: 200_000, seed: 7 });
    expect(interval).toEqual(exact);
    expect(exact).toEqual({ low: -0.4, high: 0.8 });
  });

  it('agrees with the normal approximation on a large sample', () => {
    const random = seededRandom(99);
    const differences = Array.from({ length: 2_000 }, (): number =>
      random() < 0.3 ? 1 : random() < 0.2 ? -1 : 0,
    );
    const mean = differences.reduce((sum, value) => sum + value, 0) / differences.length;
    const variance =
      differences.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (differences.length - 1);
    const halfWidth = 1.959964 * Math.sqrt(variance / differences.length);
    const [interval] = pairedBootstrapIntervals([differences], { resamples: 4_000, seed: 3 });
    expect(interval?.low).toBeCloseTo(mean - halfWidth, 2);
    expect(interval?.high).toBeCloseTo(mean + halfWidth, 2);
  });

  it('is reproducible from its seed and degenerate when every pair differs alike', () => {
    const differences = [1, 0, 1, 1, 0, -1, 0, 1];
    const first = pairedBootstrapIntervals([differences], { resamples: 500, seed: 42 });
    expect(pairedBootstrapIntervals([differences], { resamples: 500, seed: 42 })).toEqual(first);
    expect(pairedBootstrapIntervals([differences], { resamples: 500, seed: 43 })).not.toEqual(
      first,
    );
    expect(pairedBootstrapIntervals([[0.5, 0.5, 0.5]], { resamples: 200 })).toEqual([
      { low: 0.5, high: 0.5 },
    ]);
  });
});

describe('compareRuns', () => {
  it('reports the paired table, the differences, the p-value and the flipped tasks of a known table', () => {
    // 3 both pass, 1 only A, 6 only B, 2 neither: 12 tasks
    const pairs = [
      ...['t01', 't02', 't03'].map((id) => pair(id, true, true)),
      pair('t04', true, false),
      ...['t05', 't06', 't07', 't08', 't09', 't10'].map((id) => pair(id, false, true)),
      pair('t11', false, false, 0.5, 0.25),
      pair('t12', false, false, 0, 0.75),
    ];
    const sut = compareRuns('A', 'B', pairs, { resamples: 2_000 });
    expect(sut.table).toEqual({ both_pass: 3, only_a: 1, only_b: 6, neither: 2 });
    expect(pairedTable(pairs)).toEqual(sut.table);
    expect(sut.paired).toBe(12);
    expect(sut.success_rate.a).toBeCloseTo(4 / 12, 12);
    expect(sut.success_rate.b).toBeCloseTo(9 / 12, 12);
    expect(sut.success_rate.difference).toBeCloseTo(5 / 12, 12);
    // rewards: A = 4 + 0.5 + 0 = 4.5, B = 9 + 0.25 + 0.75 = 10
    expect(sut.mean_reward.a).toBeCloseTo(4.5 / 12, 12);
    expect(sut.mean_reward.difference).toBeCloseTo(5.5 / 12, 12);
    expect(sut.mcnemar_p).toBeCloseTo(0.125, 12);
    expect(sut.success_rate.ci95.low).toBeLessThan(5 / 12);
    expect(sut.success_rate.ci95.high).toBeGreaterThan(5 / 12);
    expect(sut.flipped.map((task) => [task.task_id, task.passed])).toEqual([
      ['t04', 'only_a'],
      ...['t05', 't06', 't07', 't08', 't09', 't10'].map((id) => [id, 'only_b']),
    ]);
  });

  it('has nothing to say about zero pairs, without throwing', () => {
    const sut = compareRuns('A', 'B', []);
    expect(sut.paired).toBe(0);
    expect(sut.mcnemar_p).toBe(1);
    expect(Number.isNaN(sut.success_rate.difference)).toBe(true);
  });
});
