// The original Bytebot OSWorld scripts are Python; their files are written with `json.dump(indent=2)`,
// timestamps with `datetime.isoformat()` and numbers with `round()`. These functions reproduce that.

const NON_ASCII = /[\u0080-\uffff]/g;

/** `json.dump(value, indent=2)` with Python's default `ensure_ascii=True`. */
export function formatPythonJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    NON_ASCII,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat()`, e.g. `2026-02-08T19:09:47.129000+00:00`. */
export function formatPythonUtcTimestamp(epochMs: number): string {
  const iso = new Date(epochMs).toISOString(); // 2026-02-08T19:09:47.129Z
  const seconds = iso.slice(0, 19);
  const millis = iso.slice(20, 23);
  // isoformat() leaves out the fraction when the microseconds are zero
  return millis === '000' ? `${seconds}+00:00` : `${seconds}.${millis}000+00:00`;
}

/**
 * Python's `round(x, digits)`: the exact binary value of `x` rounded to `digits` decimals, ties to
 * even. `toFixed` also rounds the exact value but sends ties away from zero, so only exact ties
 * (short dyadic values such as 0.125) need correcting.
 */
export function roundLikePython(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const awayFromZero = Number(x.toFixed(digits));
  const [whole = '0', fraction = ''] = Math.abs(x).toFixed(Math.min(100, digits + 60)).split('.');
  if (!/^50*$/.test(fraction.slice(digits))) return awayFromZero;
  const kept = digits > 0 ? `${whole}.${fraction.slice(0, digits)}` : whole;
  if (Number(kept.slice(-1)) % 2 === 1) return awayFromZero;
  return Math.sign(x) * Number(kept);
}
