// Parsers of command-line values: each throws a message that says what is expected, for the CLI
// to print beside the flag and the value.

export function positiveInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value <= 0)
    throw new Error('expected a positive whole number, e.g. 10');
  return value;
}

export function numberBetween(min: number, max: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max)
      throw new Error(`expected a number from ${min} to ${max}`);
    return value;
  };
}

export function httpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('expected an http(s) URL, e.g. http://localhost:8000/v1');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('expected an http(s) URL, e.g. http://localhost:8000/v1');
  return text;
}

export function nonNegativeInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value))
    throw new Error('expected a whole number, 0 or more');
  return value;
}

export function portNumber(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value > 65535)
    throw new Error('expected a port from 0 to 65535 (0: any free port)');
  return value;
}

/** `a,b` `c` → `a`, `b`, `c`: a repeatable, comma-separated flag's values. */
export function splitList(values: readonly string[]): string[] {
  return values
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}
