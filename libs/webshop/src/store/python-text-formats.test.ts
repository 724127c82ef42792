import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  flaskToJsonDict,
  pythonDictRepr,
  pythonJsonDumpsDict,
  pythonListRepr,
  pythonSlice,
  pythonValueRepr,
  quotePathSegment,
  werkzeugQuotePlus,
} from './python-text-formats.js';

describe('Python text forms', () => {
  it('writes dicts and lists as Python str() does', () => {
    expect(
      pythonDictRepr(
        new Map([
          ['size', "men's"],
          ['x', 'a\\b\u00a0\u2028\n'],
        ]),
      ),
    ).toBe(`{'size': "men's", 'x': 'a\\\\b\\xa0\\u2028\\n'}`);
    expect(pythonListRepr(['bright', '', "it's", 'say "hi"', 'both \' and "'])).toBe(
      `['bright', '', "it's", 'say "hi"', 'both \\' and "']`,
    );
    expect(pythonDictRepr(new Map())).toBe('{}');
  });

  it('dumps JSON like json.dumps with ensure_ascii, and like Flask tojson when sorted', () => {
    const entries = new Map([
      ['b', 'caf\u00e9 \u{1f600}'],
      ['a', "men's <b>&"],
    ]);
    expect(pythonJsonDumpsDict(entries, { sortKeys: false })).toBe(
      `{"b": "caf\\u00e9 \\ud83d\\ude00", "a": "men's <b>&"}`,
    );
    expect(pythonJsonDumpsDict(entries, { sortKeys: true })).toBe(
      `{"a": "men's <b>&", "b": "caf\\u00e9 \\ud83d\\ude00"}`,
    );
    expect(
      flaskToJsonDict(
        new Map<string, string | null>([
          ['z', null],
          ['a', "it's <x> & y"],
        ]),
      ),
    ).toBe('{"a": "it\\u0027s \\u003cx\\u003e \\u0026 y", "z": null}');
  });

  it('quotes URLs as werkzeug does for query arguments and as the site shows path segments', () => {
    expect(werkzeugQuotePlus("{'scent': 'bright citrus', 'size': '3 ounce (pack of 1)'}")).toBe(
      "%7B'scent'%3A+'bright+citrus',+'size'%3A+'3+ounce+(pack+of+1)'%7D",
    );
    expect(werkzeugQuotePlus('a+b&c=d/é')).toBe('a%2Bb%26c%3Dd%2F%C3%A9');
    expect(quotePathSegment("['red', 'basketball', 'shoes']")).toBe(
      '%5B%27red%27%2C%20%27basketball%27%2C%20%27shoes%27%5D',
    );
    expect(quotePathSegment("{'color': 'black'}")).toBe('%7B%27color%27:%20%27black%27%7D');
  });

  it('quotes every string as byte-wise UTF-8 percent-encoding does, whatever mix of ASCII and other characters', () => {
    // The plain definition: encode all of it to UTF-8, then each byte is kept or escaped.
    const byteWise = (value: string, safe: string, spaceAsPlus: boolean) =>
      Array.from(new TextEncoder().encode(value), (byte) => {
        const ch = String.fromCharCode(byte);
        if (spaceAsPlus && byte === 0x20) return '+';
        if (byte < 0x80 && /[A-Za-z0-9_.~-]/.test(ch)) return ch;
        if (byte < 0x80 && safe.includes(ch)) return ch;
        return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      }).join('');
    const pieces = [
      'a',
      'Z',
      '0',
      ' ',
      '+',
      '%',
      "'",
      '(',
      ':',
      '/',
      '{',
      'é',
      '☕',
      '\u{1F600}',
      '\ud800',
      '\u0000',
      '\x7f',
      '~',
    ];
    let seed = 7;
    for (let n = 0; n < 3_000; n++) {
      let value = '';
      for (let k = n % 9; k > 0; k--) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        value += pieces[seed % pieces.length];
      }
      expect(werkzeugQuotePlus(value), JSON.stringify(value)).toBe(
        byteWise(value, "$!'()*,;", true),
      );
      expect(quotePathSegment(value), JSON.stringify(value)).toBe(byteWise(value, ':', false));
    }
  });

  it('escapes HTML as markupsafe does', () => {
    expect(escapeHtml(`Salt & Pepper <2-Pack> "Classic" it's`)).toBe(
      'Salt &amp; Pepper &lt;2-Pack&gt; &#34;Classic&#34; it&#39;s',
    );
  });

  it('slices like Python, negative indices included', () => {
    const list = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    expect(pythonSlice(list, 10, 20)).toEqual([10, 11]);
    expect(pythonSlice(list, -10, 0)).toEqual([]);
    expect(pythonSlice(list, -20, -10)).toEqual([0, 1]);
  });

  it('prints JSON-like values in Python form', () => {
    expect(
      pythonValueRepr({ r_type: 0.5, query_match: true, names: ['a'], none: null, n: 3 }),
    ).toBe("{'r_type': 0.5, 'query_match': True, 'names': ['a'], 'none': None, 'n': 3}");
  });
});
