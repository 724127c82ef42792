import { describe, expect, it } from 'vitest';
import { TokenTermCache, UNCACHED } from './token-term-cache.js';

describe('TokenTermCache', () => {
  it('finds cached tokens by their characters inside a larger text', () => {
    const sut = new TokenTermCache(1000);
    const text = 'red shoes, red dress';
    expect(sut.find(text, 0, 3)).toBe(UNCACHED);
    sut.add('red', 7);
    expect(sut.find(text, 11, 14)).toBe(7);
    expect(sut.find(text, 4, 9)).toBe(UNCACHED);
    sut.add('shoes', -1);
    expect(sut.find('shoes', 0, 5)).toBe(-1);
    expect(sut.find('shoe', 0, 4)).toBe(UNCACHED);
  });

  it('keeps every entry through growth and starts over at its limit', () => {
    const sut = new TokenTermCache(20_000);
    for (let i = 0; i < 10_000; i++) {
      const token = `t${i}`;
      expect(sut.find(token, 0, token.length)).toBe(UNCACHED);
      sut.add(token, i);
    }
    for (let i = 0; i < 10_000; i++) expect(sut.find(`t${i}`, 0, `t${i}`.length)).toBe(i);

    const small = new TokenTermCache(2);
    for (const [value, token] of ['a', 'b', 'c'].entries()) {
      small.find(token, 0, 1);
      small.add(token, value);
    }
    expect(small.size).toBe(1);
    expect(small.find('c', 0, 1)).toBe(2);
    expect(small.find('a', 0, 1)).toBe(UNCACHED);
  });
});
