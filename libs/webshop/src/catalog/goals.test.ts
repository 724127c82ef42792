import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WebshopProduct } from './catalog-schemas.js';
import {
  drawPriceLimit,
  getSyntheticGoals,
  NO_PRICE_LIMIT,
  orderGoalsLikeWebshop,
  PRICE_RANGE,
} from './goals.js';
import { PythonRandom } from './python-random.js';

const sharedWebshop = new URL('../../../../../shared/webshop/', import.meta.url);
const readShared = (relative: string): unknown =>
  JSON.parse(readFileSync(new URL(relative, sharedWebshop), 'utf8'));

function product(
  asin: string,
  options: Record<string, string[]>,
  attributes: string[],
): WebshopProduct {
  return {
    asin,
    name: `Name ${asin}`,
    Title: `Title ${asin}`,
    Description: '',
    BulletPoints: [],
    Reviews: [],
    Rating: 'N.A.',
    pricing: [15],
    Price: '$15.0',
    options,
    option_to_image: {},
    Attributes: attributes,
    MainImage: '',
    query: 'q',
    category: 'c',
    product_category: 'a › b',
    instruction_text: `Find me ${asin}`,
    instruction_attributes: attributes,
    customization_options: '',
    full_description: '',
    small_description: [],
    images: [''],
  };
}

describe('drawPriceLimit', () => {
  it('never picks the first candidate above the price, and stops at 980', () => {
    const rng = new PythonRandom(5);
    const limits = new Set(Array.from({ length: 300 }, () => drawPriceLimit(15, rng).priceUpper));
    expect([...limits].sort((a, b) => a - b)).toEqual([30, 40, 50]);
    expect(drawPriceLimit(975, rng)).toEqual({
      priceUpper: 990,
      priceText: ', and price lower than 990.00 dollars',
    });
    expect(drawPriceLimit(980, rng)).toEqual({ priceUpper: NO_PRICE_LIMIT, priceText: '' });
    expect(PRICE_RANGE).toHaveLength(99);
  });
});

describe('getSyntheticGoals', () => {
  it('makes one goal per option combination (sorted names, first slowest) and weights attributes', () => {
    const products = [
      product('A', { size: ['s', 'm'], color: ['red', 'blue'] }, ['warm', 'soft']),
      product('B', {}, ['warm']),
      product('C', { size: [] }, ['warm']),
    ];
    const prices = new Map([
      ['A', 15],
      ['B', 15],
      ['C', 15],
    ]);
    const goals = getSyntheticGoals(products, prices, new PythonRandom(1));
    expect(goals.map((goal) => goal.goal_options)).toEqual([
      { color: 'red', size: 's' },
      { color: 'red', size: 'm' },
      { color: 'blue', size: 's' },
      { color: 'blue', size: 'm' },
      {},
    ]);
    expect(goals[0]?.instruction_text).toMatch(
      /^Find me A with color: red, and size: s, and price lower than \d+\.00 dollars$/,
    );
    expect(goals[4]?.instruction_text).toMatch(/^Find me B, and price lower than/);
    expect(goals[0]?.name).toBe('Title A');
    expect(goals[0]?.weight).toBe((1 / 5 + 1 / 4) / 2);
    expect(goals[4]?.weight).toBe(1 / 5);
  });

  it('draws one price limit per product even when it yields no goal', () => {
    const prices = new Map([
      ['C', 15],
      ['B', 15],
    ]);
    const withEmpty = getSyntheticGoals(
      [product('C', { size: [] }, ['x']), product('B', {}, ['x'])],
      prices,
      new PythonRandom(3),
    );
    const rng = new PythonRandom(3);
    drawPriceLimit(15, rng);
    expect(withEmpty[0]?.price_upper).toBe(drawPriceLimit(15, rng).priceUpper);
  });
});

describe('orderGoalsLikeWebshop', () => {
  it('puts the 12,087 human goals in the order of data/human_goals.json (CPython seed-233 shuffle)', () => {
    const humanGoals = readShared('data/human_goals.json') as string[];
    const permutations = (
      readShared('fixtures/python_random_seed233.json') as {
        shuffle_permutations: Record<string, number[]>;
      }
    ).shuffle_permutations;
    expect(humanGoals).toHaveLength(12087);
    const ordered = orderGoalsLikeWebshop(
      Array.from({ length: humanGoals.length }, (_, index) => index),
    );
    expect(ordered).toEqual(permutations['12087']);
  });
});
