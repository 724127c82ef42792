// Python's `round()`, for numbers that must equal what the original (Python) benchmarks print.

/**
 * Python's `round(x, digits)`: the exact binary value of `x` rounded to `digits` decimals, ties to
 * even. `toFixed` also rounds the exact value but sends ties away from zero, so only exact ties
 * (short dyadic values such as 0.125) need correcting.
 */
export function roundLikePython(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const awayFromZero = Number(x.toFixed(digits));
  const [whole = '0', fraction = ''] = Math.abs(x)
    .toFixed(Math.min(100, digits + 60))
    .split('.');
  if (!/^50*$/.test(fraction.slice(digits))) return awayFromZero;
  const kept = digits > 0 ? `${whole}.${fraction.slice(0, digits)}` : whole;
  if (Number(kept.slice(-1)) % 2 === 1) return awayFromZero;
  return Math.sign(x) * Number(kept);
}
