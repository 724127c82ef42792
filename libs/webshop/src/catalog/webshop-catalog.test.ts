import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pathInSharedWebshop, syntheticCatalogFiles } from '../../test-support/shared-fixtures.js';
import { loadCatalogFiles } from './catalog-files.js';
import { webshopGoalSplit } from './goals.js';
import { buildWebshopCatalog } from './webshop-catalog.js';

const pathIn = pathInSharedWebshop;
const syntheticFiles = syntheticCatalogFiles;

type EpisodeFixtureMode = {
  products: Record<string, unknown>[];
  product_prices: Record<string, number>;
  goals: Record<string, unknown>[];
  episodes: { name: string; goal_index: number; goal: Record<string, unknown> }[];
};
type EpisodeFixture = {
  human: EpisodeFixtureMode;
  synthetic: EpisodeFixtureMode;
  notes: { rng: string };
};

const episodes = JSON.parse(
  readFileSync(pathIn('fixtures/env_episodes.json'), 'utf8'),
) as EpisodeFixture;
const fixturePriceSeed = Number(/random\.seed\((\d+)\)/.exec(episodes.notes.rng)?.[1]);

describe.each(['human', 'synthetic'] as const)(
  'buildWebshopCatalog (%s goals) on the synthetic inputs',
  (goalMode) => {
    const expected = episodes[goalMode];
    const sut = buildWebshopCatalog(loadCatalogFiles(syntheticFiles), {
      goalMode,
      priceSeed: fixturePriceSeed,
    });

    it('keeps the products load_products keeps, in order, with the processed fields', () => {
      expect(sut.products.map((product) => product.asin)).toEqual(
        expected.products.map((product) => product.asin),
      );
      sut.products.forEach((product, i) => {
        const fixtureProduct = expected.products[i] ?? {};
        for (const [key, value] of Object.entries(fixtureProduct)) {
          expect({
            asin: product.asin,
            key,
            value: (product as Record<string, unknown>)[key],
          }).toEqual({
            asin: product.asin,
            key,
            value,
          });
        }
        expect(Object.keys(product).sort()).toEqual(Object.keys(fixtureProduct).sort());
      });
    });

    it('draws the hidden prices upstream drew after random.seed(1234)', () => {
      expect(Object.fromEntries(sut.productPrices)).toEqual(expected.product_prices);
    });

    it('builds the goals in upstream goal-index order, key order included', () => {
      expect(sut.goals).toEqual(expected.goals);
      sut.goals.forEach((goal, i) =>
        expect(Object.keys(goal)).toEqual(Object.keys(expected.goals[i] ?? {})),
      );
      for (const episode of expected.episodes)
        expect(sut.goals[episode.goal_index]).toEqual(episode.goal);
    });
  },
);

describe('buildWebshopCatalog', () => {
  it('counts skipped human instructions and fills productByAsin and attributeToAsins', () => {
    const sut = buildWebshopCatalog(loadCatalogFiles(syntheticFiles), {
      goalMode: 'human',
      priceSeed: 1,
    });
    expect(sut.skippedInstructions).toBe(1);
    expect(sut.productByAsin.get('B0TEST0004')?.Price).toBe('$100.0');
    expect([...(sut.attributeToAsins.get('stainless steel') ?? [])]).toEqual([
      'B0TEST0004',
      'B0TEST0007',
    ]);
  });

  it('gives the same prices and goals for the same seed, different ones for another seed', () => {
    const source = loadCatalogFiles(syntheticFiles);
    const first = buildWebshopCatalog(source, { goalMode: 'synthetic', priceSeed: 99 });
    const again = buildWebshopCatalog(source, { goalMode: 'synthetic', priceSeed: 99 });
    const other = buildWebshopCatalog(source, { goalMode: 'synthetic', priceSeed: 100 });
    expect(again.goals).toEqual(first.goals);
    expect(other.productPrices.get('B0TEST0002')).not.toBe(first.productPrices.get('B0TEST0002'));
  });

  it('respects numProducts like num_products (first N raw records)', () => {
    const sut = buildWebshopCatalog(loadCatalogFiles(syntheticFiles), {
      goalMode: 'synthetic',
      priceSeed: 1,
      numProducts: 7,
    });
    expect(sut.products.map((product) => product.asin)).toEqual([
      'B0TEST0001',
      'B0TEST0002',
      'B0TEST0003',
      'B0TEST0004',
      'B0TEST0005',
      'B0TEST0007',
    ]);
  });
});

describe('webshopGoalSplit', () => {
  it('puts 0-499 in test, 500-1499 in eval and the rest in train', () => {
    expect([0, 499, 500, 1499, 1500, 12086].map(webshopGoalSplit)).toEqual([
      'test',
      'test',
      'eval',
      'eval',
      'train',
      'train',
    ]);
  });
});
