// Python's `open()` in the ports: the path checks of open(), strict UTF-8 (a BOM is kept as
// U+FEFF), universal newlines and line iteration.
import { readFile } from 'node:fs/promises';
import type { PyValue } from './values.js';
import { PythonException, UnsupportedPythonFeature } from './exceptions.js';
import { pyOsError, pyOsPath } from './os.js';

/** The path `open()` accepts, or the TypeError/ValueError it raises (an int would be a descriptor). */
function pyOpenPath(path: PyValue): string {
  if (typeof path === 'bigint' || typeof path === 'boolean' || Number.isInteger(path)) {
    throw new UnsupportedPythonFeature('open() of a file descriptor number');
  }
  return pyOsPath(path);
}

/** The bytes of `open(path, 'rb').read()`. */
export async function pyReadBytes(path: PyValue): Promise<Buffer> {
  const checked = pyOpenPath(path);
  try {
    return await readFile(checked);
  } catch (error) {
    throw pyOsError(error, checked);
  }
}

const isContinuation = (byte: number | undefined): boolean =>
  byte !== undefined && byte >= 0x80 && byte < 0xc0;

/**
 * Where CPython's UTF-8 decoder stops on `bytes`: the first bad sequence's start, end and reason, or
 * undefined for valid UTF-8 (surrogates and overlong forms are invalid, as in CPython).
 */
function firstUtf8Error(bytes: Uint8Array): [number, number, string] | undefined {
  const end = bytes.length;
  let at = 0;
  while (at < end) {
    const lead = bytes[at] as number;
    if (lead < 0x80) {
      at += 1;
      continue;
    }
    if (lead < 0xc2 || lead > 0xf4) return [at, at + 1, 'invalid start byte'];
    const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    // The second byte's range narrows after E0, ED, F0 and F4 (no overlongs, surrogates, > U+10FFFF).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let offset = 1; offset < length; offset += 1) {
      const byte = bytes[at + offset];
      if (byte === undefined) return [at, end, 'unexpected end of data'];
      const valid = offset === 1 ? byte >= low && byte <= high : isContinuation(byte);
      if (!valid) return [at, at + offset, 'invalid continuation byte'];
    }
    at += length;
  }
  return undefined;
}

/** Python's strict `bytes.decode('utf-8')` (a BOM stays in the text, as with encoding='utf-8'). */
export function pyDecodeUtf8(bytes: Uint8Array): string {
  const error = firstUtf8Error(bytes);
  if (error === undefined) return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const [start, stop, reason] = error;
  const where =
    stop - start === 1
      ? `byte 0x${(bytes[start] as number).toString(16).padStart(2, '0')} in position ${start}`
      : `bytes in position ${start}-${stop - 1}`;
  throw new PythonException('UnicodeDecodeError', `'utf-8' codec can't decode ${where}: ${reason}`);
}

/** Universal newlines: what Python's text mode makes of \r\n and \r. */
const pyUniversalNewlines = (text: string): string => text.replace(/\r\n?/g, '\n');

/** `open(path).read()` (also `open(path, encoding='utf-8')`: the environment's locale is UTF-8). */
export async function pyReadText(path: PyValue): Promise<string> {
  return pyUniversalNewlines(pyDecodeUtf8(await pyReadBytes(path)));
}

/** `for line in open(path)`: lines with their '\n', the last one possibly without. */
export function pyTextLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === '' ? [] : lines;
}
