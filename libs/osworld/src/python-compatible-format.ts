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
