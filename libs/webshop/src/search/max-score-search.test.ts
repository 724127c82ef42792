import { beforeAll, describe, expect, it } from 'vitest';
import { DemoRandom } from '../demo-catalog/demo-random.js';
import { generateDemoCatalog } from '../demo-catalog/index.js';
import { searchDocumentFromRaw } from './search-contents.js';
import { buildSearchIndex, type SearchIndex } from './search-index.js';

// The demo catalogue repeats phrases across many products, so scores tie often: a good test of
// whether pruning keeps exactly the hits (and tie order) of scoring every document.
describe('search with MaxScore pruning', () => {
  let sut: SearchIndex;
  const queries: string[] = [];

  beforeAll(() => {
    const catalog = generateDemoCatalog({ products: 1500, seed: 11 });
    sut = buildSearchIndex(catalog.items.map(searchDocumentFromRaw));
    const words = catalog.items.flatMap((product) => product.name.toLowerCase().split(/[\s,]+/));
    const rng = new DemoRandom(3, 0);
    for (const entry of Object.values(catalog.attributes)) {
      if (entry.instruction !== undefined)
        queries.push(`${entry.instruction}, and price lower than 40.00 dollars`);
    }
    for (const instructions of Object.values(catalog.humanInstructions)) {
      for (const { instruction } of instructions) queries.push(instruction);
    }
    for (let i = 0; i < 300; i++) {
      queries.push(Array.from({ length: rng.int(1, 12) }, () => rng.pick(words)).join(' '));
    }
  });

  it.each([1, 10, 50, 200])('returns the exhaustive top %i for every query', (topK) => {
    expect(queries.length).toBeGreaterThan(800);
    for (const query of queries) {
      expect(sut.search(query, topK), query).toEqual(sut.searchWithTotal(query, topK).hits);
    }
  });
});
