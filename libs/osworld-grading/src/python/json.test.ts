import { describe, expect, it } from 'vitest';
import { PyDict } from './values.js';
import { pyJsonLoads } from './json.js';
import { PythonException } from './exceptions.js';

const errorOf = (text: string): string => {
  try {
    pyJsonLoads(text);
  } catch (error) {
    if (error instanceof PythonException) return `${error.type}: ${error.message}`;
    throw error;
  }
  return 'no error';
};

describe('pyJsonLoads', () => {
  it("gives json's JSONDecodeError messages with line, column and char", () => {
    // the check_direct_json_object golden case: an apostrophe turned into a quote
    const text = `{"ec076282f61ba74642e94b5a6a1250c6988204d59d9b02936606b6b8ef1e4433": "Kilimanjaro"s.jpg"}`;
    expect(errorOf(text)).toBe(
      "JSONDecodeError: Expecting ',' delimiter: line 1 column 83 (char 82)",
    );
    expect(errorOf('{"a": 1,}')).toBe(
      'JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 9 (char 8)',
    );
    expect(errorOf('[1,]')).toBe('JSONDecodeError: Expecting value: line 1 column 4 (char 3)');
    expect(errorOf('{}\n x')).toBe('JSONDecodeError: Extra data: line 2 column 2 (char 4)');
  });

  it('accepts NaN and Infinity and refuses a BOM and raw control characters', () => {
    expect(pyJsonLoads('[NaN, -Infinity]')).toEqual([Number.NaN, -Infinity]);
    expect(errorOf('\ufeff{}')).toMatch(/^JSONDecodeError: Unexpected UTF-8 BOM/);
    expect(errorOf('"a\tb"')).toMatch(/^JSONDecodeError: Invalid control character at/);
  });

  it('keeps insertion order, the first position and the last value of a repeated key', () => {
    const dict = pyJsonLoads('{"2": 1, "1": 2, "2": 3}') as PyDict;
    expect(dict.items()).toEqual([
      ['2', 3],
      ['1', 2],
    ]);
  });

  it('keeps integers beyond 2^53 exact', () => {
    expect(pyJsonLoads('12345678901234567891')).toBe(12345678901234567891n);
    expect(pyJsonLoads('1.0')).toBe(1);
  });
});
