import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fullProcess, fuzzRatio, tokenSetRatio } from './fuzzy-match.js';

const rewardUnitsUrl = new URL(
  '../../../../../shared/webshop/fixtures/reward_units.json',
  import.meta.url,
);
type TokenPair = {
  s1: string;
  s2: string | string[];
  s2_str?: string;
  token_set_ratio: number;
  ratio?: number;
};
const pairs = (
  JSON.parse(readFileSync(rewardUnitsUrl, 'utf8')) as { token_set_ratio_pairs: TokenPair[] }
).token_set_ratio_pairs;

describe('tokenSetRatio', () => {
  it('matches thefuzz 0.19 (difflib backend) on every fixture pair', () => {
    const mismatches = pairs
      .map((pair) => ({ pair, actual: tokenSetRatio(pair.s1, pair.s2) }))
      .filter(({ pair, actual }) => actual !== pair.token_set_ratio);
    expect(pairs.length).toBe(2891);
    expect(mismatches).toEqual([]);
  });

  it('scores subsets 100 and keeps the documented thresholds', () => {
    expect(tokenSetRatio('x-large', 'large')).toBe(100);
    expect(tokenSetRatio('cool powder snow', 'powder snow')).toBe(100);
    expect(tokenSetRatio('xx-large', 'x-large')).toBe(93);
    expect(tokenSetRatio('grey', 'gray')).toBe(75);
    expect(tokenSetRatio('!!!', '!!!')).toBe(0);
    expect(tokenSetRatio(null, 'x')).toBe(0);
  });

  it('reads a tuple as its Python str(), so the option name is an extra token', () => {
    expect(tokenSetRatio('XL', ['size', 'XL'])).toBe(100);
    expect(fullProcess(['size', 'XL'])).toBe('size    xl');
  });

  it('drops U+0080-U+00FF before replacing non-word characters, keeping letters beyond', () => {
    expect(fullProcess('Café › Crème_brûlée ’s')).toBe('caf   crme_brle  s');
    expect(fullProcess('ŁÓDŹ 東京 ①')).toBe('łdź 東京 ①');
  });
});

describe('fuzzRatio', () => {
  it('matches thefuzz fuzz.ratio on every fixture pair that records it', () => {
    const withRatio = pairs.filter(
      (pair): pair is TokenPair & { s2: string; ratio: number } =>
        typeof pair.s2 === 'string' && pair.ratio !== undefined,
    );
    const mismatches = withRatio.filter((pair) => fuzzRatio(pair.s1, pair.s2) !== pair.ratio);
    expect(withRatio.length).toBe(2886);
    expect(mismatches).toEqual([]);
  });

  it('rounds half to even like Python round()', () => {
    // Total length 16: one matched character gives 12.5 (→ 12), three give 37.5 (→ 38).
    expect(fuzzRatio('a', 'abcdefghijklmno')).toBe(12);
    expect(fuzzRatio('abc', 'abcdefghijklm')).toBe(38);
    expect(fuzzRatio('', '')).toBe(100);
    expect(fuzzRatio('a', '')).toBe(0);
  });
});
