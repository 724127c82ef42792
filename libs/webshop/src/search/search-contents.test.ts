import { describe, expect, it } from 'vitest';
import {
  buildSearchContents,
  buildSearchContentsFromRaw,
  pythonStrip,
  searchDocumentFromRaw,
} from './search-contents.js';
import {
  loadBm25Fixture,
  loadBm25FixtureProducts,
  loadEnvEpisodesFixture,
} from '../../test-support/search-fixtures.js';

describe('search contents', () => {
  it('builds the contents Lucene indexed for all 3,000 raw fixture products', () => {
    const documents = loadBm25Fixture().documents;
    const products = loadBm25FixtureProducts();
    expect(products).toHaveLength(documents.length);
    products.forEach((raw, docid) => {
      expect(searchDocumentFromRaw(raw), `docid ${docid}`).toEqual({
        asin: documents[docid]?.id,
        contents: documents[docid]?.contents,
      });
    });
  });

  it('builds the env fixture search documents from processed products', () => {
    const episodes = loadEnvEpisodesFixture();
    for (const mode of [episodes.human, episodes.synthetic]) {
      const built = mode.products.map((product) => ({
        id: product.asin,
        contents: buildSearchContents(product),
      }));
      expect(built).toEqual(mode.search_documents);
    }
  });

  it('strips, splits slashes and lowercases option values; skips null options', () => {
    const contents = buildSearchContentsFromRaw({
      asin: 'B000000001',
      name: 'Watch Band',
      full_description: '',
      small_description: 'Fits 38/40 mm ',
      customization_options: {
        Color: null,
        'Band Size': [{ value: ' 38 / 40 / 41 mm\u00a0' }, { value: 'Large' }],
      },
    });
    expect(contents).toBe('watch band  fits 38/40 mm  band size: 38  |  40  |  41 mm, large');
  });

  it('keeps the trailing space of a product without options', () => {
    expect(
      buildSearchContents({ Title: 'A', Description: 'B', BulletPoints: ['C'], options: {} }),
    ).toBe('a b c ');
  });

  it('fails like the original on a product without bullet points', () => {
    expect(() =>
      buildSearchContents({ Title: 'A', Description: 'B', BulletPoints: [], options: {} }),
    ).toThrow();
  });

  it('strips Python whitespace only', () => {
    expect(pythonStrip('\u001f\u00a0 x \u0085')).toBe('x');
    expect(pythonStrip('\ufeffx')).toBe('\ufeffx');
  });
});
