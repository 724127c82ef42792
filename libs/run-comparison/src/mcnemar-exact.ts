/**
 * McNemar's exact test: under "no difference" each of the n = b + c discordant pairs goes either
 * way with probability 1/2, so the two-sided p-value is twice the smaller binomial tail, at most 1.
 * Terms are summed in log space: 2^-n underflows a double from n = 1075 on.
 */
export function mcnemarExactPValue(onlyA: number, onlyB: number): number {
  for (const count of [onlyA, onlyB]) {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError(
        `discordant counts must be non-negative integers, got ${onlyA} and ${onlyB}`,
      );
  }
  const n = onlyA + onlyB;
  if (n === 0) return 1;
  const smaller = Math.min(onlyA, onlyB);
  const logFactorial = new Float64Array(n + 1);
  for (let i = 2; i <= n; i += 1) logFactorial[i] = (logFactorial[i - 1] ?? 0) + Math.log(i);
  const logTerm = (k: number) =>
    (logFactorial[n] ?? 0) - (logFactorial[k] ?? 0) - (logFactorial[n - k] ?? 0) - n * Math.LN2;
  const logs = Array.from({ length: smaller + 1 }, (_, k) => logTerm(k));
  const peak = Math.max(...logs);
  const tail = Math.exp(peak) * logs.reduce((sum, value) => sum + Math.exp(value - peak), 0);
  return Math.min(1, 2 * tail);
}
