import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.js';

describe('LruMap', () => {
  it('drops the least recently used entry past its capacity; get and set are uses, has is not', () => {
    const sut = new LruMap<string, number>(2);
    sut.set('a', 1);
    sut.set('b', 2);
    expect(sut.get('a')).toBe(1);
    expect(sut.has('b')).toBe(true);
    sut.set('c', 3);
    expect([sut.has('a'), sut.has('b'), sut.has('c')]).toEqual([true, false, true]);
    sut.set('a', 10);
    sut.set('d', 4);
    expect([sut.get('a'), sut.get('c'), sut.get('d'), sut.size]).toEqual([10, undefined, 4, 2]);
  });

  it('keeps nothing at capacity 0', () => {
    const sut = new LruMap<string, number>(0);
    sut.set('a', 1);
    expect([sut.get('a'), sut.size]).toEqual([undefined, 0]);
  });
});
