import { describe, expect, it } from 'vitest';
import {
  attributeEntrySchema,
  buildWebshopCatalog,
  humanInstructionSchema,
  rawProductSchema,
  type WebshopGoal,
} from '../catalog/index.js';
import { getReward } from '../reward/index.js';
import { buildSearchContents, buildSearchIndex, searchDocumentFromRaw } from '../search/index.js';
import {
  DEMO_CATALOG_SIZE,
  generateDemoCatalog,
  generateDemoProduct,
  generateDemoProducts,
} from './demo-catalog.js';
import { DEMO_PRODUCT_GROUPS } from './product-groups.js';

const RAW_PRODUCT_KEYS = [
  'name',
  'product_information',
  'brand',
  'brand_url',
  'full_description',
  'pricing',
  'list_price',
  'availability_quantity',
  'availability_status',
  'images',
  'product_category',
  'average_rating',
  'small_description',
  'total_reviews',
  'total_answered_questions',
  'customization_options',
  'seller_id',
  'seller_name',
  'fulfilled_by_amazon',
  'fast_track_message',
  'aplus_present',
  'asin',
  'category',
  'query',
  'page',
  'small_description_old',
];

const demo = generateDemoCatalog({ products: DEMO_CATALOG_SIZE, seed: 7 });

describe('generateDemoCatalog', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    expect(JSON.stringify(generateDemoCatalog({ products: DEMO_CATALOG_SIZE, seed: 7 }))).toBe(
      JSON.stringify(demo),
    );
    const other = generateDemoCatalog({ products: 50, seed: 8 });
    expect(other.items.map((product) => product.name)).not.toEqual(
      demo.items.slice(0, 50).map((product) => product.name),
    );
  });

  it('streams the same products it builds, and any product can be generated on its own', () => {
    const streamed = [...generateDemoProducts({ products: 30, seed: 7 })].map(
      (record) => record.product,
    );
    expect(streamed).toEqual(demo.items.slice(0, 30));
    expect(generateDemoProduct(7, 777).product).toEqual(demo.items[777]);
  });

  it('writes raw products in the items_shuffle format', () => {
    const asins = new Set<string>();
    for (const product of demo.items) {
      expect(Object.keys(product)).toEqual(RAW_PRODUCT_KEYS);
      expect(rawProductSchema.safeParse(product).success, product.asin).toBe(true);
      expect(product.asin).toMatch(/^B0[0-9A-Z]{8}$/);
      asins.add(product.asin);
      expect(product.product_category).toContain(' › ');
      expect(product.pricing).toMatch(/^(\$[\d,]+\.\d{2}( - \$[\d,]+\.\d{2})?)?$/);
      const bullets =
        typeof product.small_description === 'string'
          ? [product.small_description]
          : product.small_description;
      expect(bullets.length).toBeGreaterThan(0);
      for (const bullet of bullets) expect(bullet.endsWith(' ')).toBe(true);
      if (product.customization_options !== '') {
        for (const values of Object.values(product.customization_options)) {
          for (const value of values ?? []) expect(value.value.trim()).toBe(value.value);
        }
      }
    }
    expect(asins.size).toBe(DEMO_CATALOG_SIZE);
    expect(new Set(demo.items.map((product) => product.category))).toEqual(
      new Set(['beauty', 'fashion', 'garden', 'grocery', 'electronics']),
    );
    const prices = demo.items.map((product) => product.pricing);
    expect(prices.some((price) => price.includes(' - '))).toBe(true);
    expect(prices.some((price) => price === '')).toBe(true);
    expect(demo.items.some((product) => product.customization_options === '')).toBe(true);
  });

  it('writes attribute entries in the items_ins_v2 format, with instruction seeds for a share of products', () => {
    expect(Object.keys(demo.attributes)).toEqual(demo.items.map((product) => product.asin));
    const withInstruction = Object.values(demo.attributes).filter(
      (entry) => entry.instruction !== undefined,
    );
    expect(withInstruction.length).toBeGreaterThan(300);
    expect(withInstruction.length).toBeLessThan(500);
    for (const product of demo.items) {
      const entry = demo.attributes[product.asin];
      expect(attributeEntrySchema.safeParse(entry).success).toBe(true);
      const text = [product.name, product.full_description, ...[product.small_description].flat()]
        .join(' ')
        .toLowerCase();
      // Attributes beyond the two in the title are written into the description, when there is one.
      const written =
        product.full_description === ''
          ? (entry?.attributes ?? []).slice(0, 2)
          : (entry?.attributes ?? []);
      for (const attribute of written) expect(text, product.asin).toContain(attribute);
      for (const attribute of entry?.instruction_attributes ?? [])
        expect(entry?.attributes).toContain(attribute);
      const contents = searchDocumentFromRaw(product).contents;
      for (const value of entry?.instruction_options ?? []) expect(contents).toContain(value);
    }
  });

  it('writes human instructions in the items_human_ins format', () => {
    const records = Object.values(demo.humanInstructions).flat();
    expect(records.length).toBeGreaterThan(250);
    for (const record of records) {
      expect(humanInstructionSchema.safeParse(record).success).toBe(true);
      expect(record.instruction_attributes.length).toBeGreaterThan(0);
      expect(record.instruction).toMatch(/^[a-z'].*\.$/);
    }
  });

  it('uses every product group', () => {
    const seen = new Set(demo.items.map((product) => product.product_category));
    expect(seen.size).toBe(DEMO_PRODUCT_GROUPS.length);
  });
});

describe('the demo catalogue through the WebShop code path', () => {
  for (const goalMode of ['synthetic', 'human'] as const) {
    it(`gives ${goalMode} goals that search finds and a rule agent partly satisfies`, () => {
      const catalog = buildWebshopCatalog(demo, { goalMode, priceSeed: 42 });
      expect(catalog.products).toHaveLength(DEMO_CATALOG_SIZE);
      expect(catalog.goals.length).toBeGreaterThan(300);
      const index = buildSearchIndex(
        catalog.products.map((product) => ({
          asin: product.asin,
          contents: buildSearchContents(product),
        })),
      );
      const goals: WebshopGoal[] = catalog.goals.slice(0, 300);
      let inTopTen = 0;
      let rewardSum = 0;
      for (const goal of goals) {
        const hits = index.search(goal.instruction_text);
        const rank = hits.findIndex((hit) => hit.asin === goal.asin);
        if (rank >= 0 && rank < 10) inTopTen++;
        // The paper's rule baseline: search the instruction, buy the first result as it is.
        const bought = catalog.productByAsin.get(hits[0]?.asin ?? '');
        if (bought !== undefined) {
          rewardSum += getReward(
            bought,
            goal,
            catalog.productPrices.get(bought.asin) ?? 0,
            {},
          ).reward;
        }
      }
      expect(inTopTen / goals.length).toBeGreaterThan(0.75);
      const meanReward = rewardSum / goals.length;
      expect(meanReward).toBeGreaterThan(0.3);
      expect(meanReward).toBeLessThan(0.95);
    });
  }
});
