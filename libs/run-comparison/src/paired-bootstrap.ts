import { seededRandom } from './seeded-random.js';

export interface BootstrapOptions {
  /** Resamples drawn; 10,000 by default. */
  resamples?: number;
  /** PRNG seed; the same seed gives the same interval. 1 by default. */
  seed?: number;
  /** Two-sided coverage; 0.95 by default. */
  level?: number;
}

export interface Interval {
  low: number;
  high: number;
}

export const DEFAULT_BOOTSTRAP = { resamples: 10_000, seed: 1, level: 0.95 } as const;

/** Type-7 quantile (linear interpolation between order statistics) of sorted values. */
function quantileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * p;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const lower = sorted[below] ?? Number.NaN;
  const upper = sorted[above] ?? Number.NaN;
  return lower + (upper - lower) * (position - below);
}

/**
 * Percentile intervals of the mean of each series of per-task differences, from one set of paired
 * resamples: every resample draws n task indices with replacement and uses them for all series,
 * so the intervals keep the pairing (a task's A and B stay together) and their joint structure.
 */
export function pairedBootstrapIntervals(
  series: readonly (readonly number[])[],
  options: BootstrapOptions = {},
): Interval[] {
  const resamples = options.resamples ?? DEFAULT_BOOTSTRAP.resamples;
  const level = options.level ?? DEFAULT_BOOTSTRAP.level;
  const n = series[0]?.length ?? 0;
  if (series.some((values) => values.length !== n))
    throw new RangeError('every series needs one value per task');
  if (n === 0) return series.map(() => ({ low: Number.NaN, high: Number.NaN }));
  const random = seededRandom(options.seed ?? DEFAULT_BOOTSTRAP.seed);
  const columns = series.map((values) => Float64Array.from(values));
  const means = series.map(() => new Float64Array(resamples));
  const sums = new Float64Array(series.length);
  for (let r = 0; r < resamples; r += 1) {
    sums.fill(0);
    for (let i = 0; i < n; i += 1) {
      const pick = Math.floor(random() * n);
      for (let s = 0; s < columns.length; s += 1)
        sums[s] = (sums[s] ?? 0) + (columns[s]?.[pick] ?? 0);
    }
    for (let s = 0; s < columns.length; s += 1) (means[s] as Float64Array)[r] = (sums[s] ?? 0) / n;
  }
  const alpha = (1 - level) / 2;
  return means.map((values) => {
    values.sort();
    return { low: quantileOfSorted(values, alpha), high: quantileOfSorted(values, 1 - alpha) };
  });
}
