import { describe, expect, it } from 'vitest';
import { pyCsvDictRows, pyCsvRows } from './csv.js';

describe("Python's csv reader (excel dialect)", () => {
  it('reads quotes, doubled quotes, quoted newlines and text after a closing quote', () => {
    expect(pyCsvRows('"a","b""c"\n"multi\nline",x\n"ab"c,d\n')).toEqual([
      ['a', 'b"c'],
      ['multi\nline', 'x'],
      ['abc', 'd'],
    ]);
  });

  it('keeps spaces after a comma and a quote inside an unquoted field', () => {
    expect(pyCsvRows('a, b\nx"y,z')).toEqual([
      ['a', ' b'],
      ['x"y', 'z'],
    ]);
  });

  it('returns what is left of an unterminated quoted field at the end', () => {
    expect(pyCsvRows('a,"open\n')).toEqual([['a', 'open\n']]);
  });

  it('DictReader: header row, blank rows skipped, extras under None, missing as None', () => {
    const rows = pyCsvDictRows('url,user\n\nimap://x,me,extra\nonly\n');
    expect(rows.map((row) => row.items())).toEqual([
      [
        ['url', 'imap://x'],
        ['user', 'me'],
        [null, ['extra']],
      ],
      [
        ['url', 'only'],
        ['user', null],
      ],
    ]);
  });

  it('keeps a UTF-8 BOM glued to the first header name', () => {
    expect(pyCsvDictRows('\ufeffurl\nx\n')[0]?.keys()).toEqual(['\ufeffurl']);
  });
});
