import { describe, expect, it } from 'vitest';
import { csvField, toCsv as sut } from './csv.js';

describe('toCsv', () => {
  it('writes RFC 4180: a header record, CRLF between records, quoted fields with doubled quotes', () => {
    const rows = [
      { id: 'a', text: 'plain', n: 1.5, ok: true },
      { id: 'b', text: 'with, comma', n: null, ok: false },
      { id: 'c', text: 'say "hi"\r\nthen go', n: 0, ok: null },
    ];
    expect(
      sut(
        [
          { label: 'id', value: (row) => row.id },
          { label: 'the "text"', value: (row) => row.text },
          { label: 'n', value: (row) => row.n },
          { label: 'ok', value: (row) => row.ok },
        ],
        rows,
      ),
    ).toBe(
      'id,"the ""text""",n,ok\r\n' +
        'a,plain,1.5,true\r\n' +
        'b,"with, comma",,false\r\n' +
        'c,"say ""hi""\r\nthen go",0,\r\n',
    );
  });

  it('quotes a lone CR or LF and writes objects as JSON', () => {
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField('a\rb')).toBe('"a\rb"');
    expect(csvField({ k: [1, 'x'] })).toBe('"{""k"":[1,""x""]}"');
    expect(csvField(' spaced ')).toBe(' spaced ');
  });
});
