import { describe, expect, it } from 'vitest';
import { levenshteinRatio } from './levenshtein-ratio.js';

describe('levenshteinRatio', () => {
  it('is 2 × LCS / total length, like python-Levenshtein', () => {
    expect(levenshteinRatio('grey', 'gray')).toBe(0.75);
    expect(levenshteinRatio('kitten', 'sitting')).toBe(8 / 13);
  });
});
