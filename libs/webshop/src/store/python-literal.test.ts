import { describe, expect, it } from 'vitest';
import { parsePythonLiteral, PythonLiteralError } from './python-literal.js';

describe('parsePythonLiteral', () => {
  it('reads the dicts and lists the site puts in URLs', () => {
    expect(parsePythonLiteral("{'scent': 'bright citrus', 'size': '3 ounce (pack of 1)'}")).toEqual(
      new Map([
        ['scent', 'bright citrus'],
        ['size', '3 ounce (pack of 1)'],
      ]),
    );
    expect(parsePythonLiteral('{"size": "38  |  40  |  41 mm"}')).toEqual(
      new Map([['size', '38  |  40  |  41 mm']]),
    );
    expect(parsePythonLiteral("['bright', '', \"it's\", 'both \\' and \"']")).toEqual([
      'bright',
      '',
      "it's",
      'both \' and "',
    ]);
    expect(parsePythonLiteral('{}')).toEqual(new Map());
  });

  it('handles escapes, prefixes, adjacent strings, numbers and constants', () => {
    expect(parsePythonLiteral("'a\\\\b\\xa0\\u2028\\n\\q'")).toBe('a\\b\u00a0\u2028\n\\q');
    expect(parsePythonLiteral('u\'x\' "y"')).toBe('xy');
    expect(parsePythonLiteral('[1, 2.5, -3e2, True, False, None, (1, 2),]')).toEqual([
      1,
      2.5,
      -300,
      true,
      false,
      null,
      [1, 2],
    ]);
  });

  it('rejects what literal_eval rejects', () => {
    for (const text of [
      '{oops',
      "{'a': 'b'",
      "'unterminated",
      '[1] extra',
      'os.system("x")',
      "{['a']: 1}",
    ]) {
      expect(() => parsePythonLiteral(text), text).toThrow(PythonLiteralError);
    }
  });
});
