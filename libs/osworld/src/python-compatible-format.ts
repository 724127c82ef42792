// The original Bytebot OSWorld scripts are Python; their files are written with `json.dump(indent=2)`,
// timestamps with `datetime.isoformat()` and numbers with `round()`. These functions reproduce that.

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * A number Python holds as a float: `json.dump` writes it as `repr(float)` does (`40.0`, not `40`).
 * JSON itself has one number type, so the exporter marks where the original's values were floats.
 */
export class PythonFloat {
  constructor(readonly value: number) {}
}

export function pythonFloat(value: number): PythonFloat {
  return new PythonFloat(value);
}

/**
 * `repr(x)` of a Python float: the shortest digits that round-trip (as JavaScript's), in fixed
 * notation with at least one decimal when the decimal exponent is from -4 to 15, else `1.5e-07`.
 */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  const sign = value < 0 ? '-' : '';
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.slice(1);
    const power = `${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
    return `${sign}${digits[0]}${fraction ? `.${fraction}` : ''}e${power}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}.${fraction || '0'}`;
}

// PythonFloat values travel through JSON.stringify as marked strings, then become bare numbers.
const FLOAT_MARK = '\u0000python-float:';
const MARKED_FLOAT = /"\\u0000python-float:([^"\\]+)"/g;

/** `json.dump(value, indent=2)` with Python's default `ensure_ascii=True`; see `PythonFloat`. */
export function formatPythonJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, item: unknown) =>
      item instanceof PythonFloat ? `${FLOAT_MARK}${pythonFloatRepr(item.value)}` : item,
    2,
  )
    .replace(MARKED_FLOAT, '$1')
    .replace(NON_ASCII, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat()`, e.g. `2026-02-08T19:09:47.129000+00:00`. */
export function formatPythonUtcTimestamp(epochMs: number): string {
  const iso = new Date(epochMs).toISOString(); // 2026-02-08T19:09:47.129Z
  const seconds = iso.slice(0, 19);
  const millis = iso.slice(20, 23);
  // isoformat() leaves out the fraction when the microseconds are zero
  return millis === '000' ? `${seconds}+00:00` : `${seconds}.${millis}000+00:00`;
}
