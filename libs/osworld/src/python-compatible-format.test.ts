import { describe, expect, it } from 'vitest';
import { roundLikePython } from '@benchfleet/core';
import {
  formatPythonJson,
  formatPythonUtcTimestamp,
  pythonFloat,
  pythonFloatRepr,
} from './python-compatible-format.js';

describe('roundLikePython', () => {
  it.each([
    [0.125, 2, 0.12], // exact tie: to even
    [0.375, 2, 0.38],
    [2.675, 2, 2.67], // binary value is below the tie
    [0.5, 0, 0],
    [1.5, 0, 2],
    [2.5, 0, 2],
    [95.25, 1, 95.2],
    [95.35, 1, 95.3], // 95.35 is 95.349999… in binary
    [2 / 3, 4, 0.6667],
    [1, 4, 1],
    [23.45, 1, 23.4],
  ])('round(%d, %d) == %d', (x, digits, expected) => {
    expect(roundLikePython(x, digits)).toBe(expected);
  });
});

describe('formatPythonUtcTimestamp', () => {
  it('writes isoformat() with microseconds and +00:00', () => {
    expect(formatPythonUtcTimestamp(Date.UTC(2026, 1, 8, 19, 9, 47, 129))).toBe(
      '2026-02-08T19:09:47.129000+00:00',
    );
    expect(formatPythonUtcTimestamp(Date.UTC(2026, 1, 8, 19, 9, 47, 0))).toBe(
      '2026-02-08T19:09:47+00:00',
    );
  });
});

describe('formatPythonJson', () => {
  it('indents by 2 and escapes non-ASCII like json.dump', () => {
    expect(formatPythonJson({ a: ['é', '😀'], b: {}, c: [] })).toBe(
      '{\n  "a": [\n    "\\u00e9",\n    "\\ud83d\\ude00"\n  ],\n  "b": {},\n  "c": []\n}',
    );
  });
});

describe('pythonFloatRepr', () => {
  // Each expected text is what CPython 3.11 printed for repr(float(x)).
  it.each([
    [40, '40.0'],
    [0.1, '0.1'],
    [22.1, '22.1'],
    [1e16, '1e+16'],
    [1.5e-7, '1.5e-07'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1234567890123456.7, '1234567890123456.8'],
    [1e22, '1e+22'],
    [1 / 3, '0.3333333333333333'],
    [-2.5, '-2.5'],
    [1e15, '1000000000000000.0'],
    [0, '0.0'],
  ])('repr(%d) == %s', (value, text) => {
    expect(pythonFloatRepr(value)).toBe(text);
  });

  it('writes marked floats as json.dump does and leaves ints alone', () => {
    expect(
      formatPythonJson({ duration_seconds: pythonFloat(40), steps: 4, rates: [pythonFloat(0.5)] }),
    ).toBe('{\n  "duration_seconds": 40.0,\n  "steps": 4,\n  "rates": [\n    0.5\n  ]\n}');
  });
});
