import { describe, expect, it } from 'vitest';
import { decodeLengthNorm, encodeLengthNorm, LENGTH_NORM_TABLE } from './length-norm.js';
import { loadBm25Fixture } from '../../test-support/search-fixtures.js';

const fixture = loadBm25Fixture();

describe('length norms', () => {
  it('decodes the 256 norm bytes to Lucene’s length table', () => {
    expect(Array.from({ length: 256 }, (_, norm) => decodeLengthNorm(norm))).toEqual(
      fixture.norm_length_table,
    );
    expect(Array.from(LENGTH_NORM_TABLE)).toEqual(
      fixture.norm_length_table.map((length) => Math.fround(length)),
    );
  });

  it('encodes every fixture document length to the norm byte Lucene stored', () => {
    const wrong = fixture.documents.filter((doc) => encodeLengthNorm(doc.length) !== doc.norm);
    expect(wrong).toEqual([]);
  });

  it('is exact up to 40 and rounds longer lengths down', () => {
    for (let length = 0; length <= 40; length++)
      expect(decodeLengthNorm(encodeLengthNorm(length))).toBe(length);
    expect(decodeLengthNorm(encodeLengthNorm(41))).toBe(40);
    expect(decodeLengthNorm(encodeLengthNorm(45))).toBe(44);
    expect(decodeLengthNorm(encodeLengthNorm(100))).toBe(96);
    expect(decodeLengthNorm(encodeLengthNorm(1000))).toBe(984);
  });

  it('never decodes to more than the length and is monotonic', () => {
    const violations: number[] = [];
    let previous = 0;
    for (let length = 0; length < 200_000; length += 7) {
      const norm = encodeLengthNorm(length);
      if (norm < previous || decodeLengthNorm(norm) > length) violations.push(length);
      previous = norm;
    }
    expect(violations).toEqual([]);
  });
});
