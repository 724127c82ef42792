import { describe, expect, it } from 'vitest';
import { SEARCH_PAGE_SIZE, searchResultPage } from './result-page.js';

describe('searchResultPage', () => {
  const hits = Array.from({ length: 23 }, (_, i) => i);

  it('slices 1-based pages of ten', () => {
    expect(SEARCH_PAGE_SIZE).toBe(10);
    expect(searchResultPage(hits, 1)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(searchResultPage(hits, 3)).toEqual([20, 21, 22]);
    expect(searchResultPage(hits, 4)).toEqual([]);
  });

  it('refuses pages below 1', () => {
    expect(() => searchResultPage(hits, 0)).toThrow(RangeError);
  });
});
