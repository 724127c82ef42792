import { describe, expect, it } from 'vitest';
import {
  createWinkNounExtractor,
  defaultNounExtractor,
  tableNounExtractor,
} from './noun-extractor.js';

describe('createWinkNounExtractor', () => {
  it('tags nouns with Universal POS and splits tokens like spaCy', () => {
    const sut = createWinkNounExtractor();
    const nouns = sut.nouns("Men's Slim Fit Cotton T-Shirt Short Sleeve Crew Neck");
    expect(nouns).toEqual(
      expect.arrayContaining(['men', 'cotton', 't', 'shirt', 'sleeve', 'crew', 'neck']),
    );
    expect(sut.nouns('Stainless Steel Watch Band 38mm 40mm')).toEqual(
      expect.arrayContaining(['steel', 'band', 'mm']),
    );
    expect(sut.nouns('')).toEqual([]);
    expect(sut.nouns('quickly and slowly')).toEqual([]);
  });

  it('is shared and deterministic as the default', () => {
    expect(defaultNounExtractor()).toBe(defaultNounExtractor());
    expect(defaultNounExtractor().nouns('Vegan Jerky Variety Pack')).toEqual(
      defaultNounExtractor().nouns('Vegan Jerky Variety Pack'),
    );
  });
});

describe('tableNounExtractor', () => {
  it('looks titles up, falls back or throws', () => {
    const sut = tableNounExtractor({ 'Red Hat': ['hat'] });
    expect(sut.nouns('Red Hat')).toEqual(['hat']);
    expect(() => sut.nouns('Blue Hat')).toThrow(/no nouns recorded/);
    const withFallback = tableNounExtractor({}, { fallback: tableNounExtractor({ x: ['y'] }) });
    expect(withFallback.nouns('x')).toEqual(['y']);
  });
});
