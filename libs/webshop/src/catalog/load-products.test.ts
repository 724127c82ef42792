import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCatalogFiles, readCatalogJsonFile } from './catalog-files.js';
import { CatalogFormatError } from './catalog-format-error.js';
import type { WebshopProduct } from './catalog-schemas.js';
import { DUMMY_ATTR, loadProducts } from './load-products.js';
import { parsePricing } from './product-prices.js';
import { buildWebshopCatalog } from './webshop-catalog.js';

const sharedWebshop = new URL('../../../../../shared/webshop/', import.meta.url);
const pathIn = (relative: string): string => fileURLToPath(new URL(relative, sharedWebshop));

function rawProduct(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Red Hat',
    product_information: { ASIN: 'B000000001' },
    brand: 'Brand: Acme',
    full_description: 'A red hat.',
    pricing: '$10.00',
    images: ['https://example.invalid/a.jpg', 'https://example.invalid/b.jpg'],
    product_category: 'Clothing › Hats',
    small_description: ['Warm. '],
    customization_options: '',
    asin: 'B000000001',
    category: 'fashion',
    query: ' Hats ',
    page: 1,
    ...overrides,
  };
}

function captureError(action: () => unknown): CatalogFormatError {
  try {
    action();
  } catch (error) {
    if (error instanceof CatalogFormatError) return error;
    throw error;
  }
  throw new Error('expected a CatalogFormatError');
}

describe('parsePricing', () => {
  it.each([
    ['$877.80', [877.8], '$877.8'],
    ['$1,299.00', [1299.0], '$1299.0'],
    ['$12.99 - $15.49', [12.99, 15.49], '$12.99 to $15.49'],
    ['$1 - $2 - $3', [1, 2], '$1.0 to $2.0'],
    ['from $5.', [5], '$5.0'],
    ['$.5', [0.5], '$0.5'],
    ['$١٢.٥', [12.5], '$12.5'],
    ['', [100.0], '$100.0'],
    [null, [100.0], '$100.0'],
    [undefined, [100.0], '$100.0'],
  ])('%j → %j shown as %s', (raw, pricing, price) => {
    expect(parsePricing(raw)).toEqual({ pricing, Price: price });
  });

  it.each([['12.99'], ['$'], ['$1.2.3'], ['$abc']])(
    'rejects %j like upstream (IndexError / invalid Decimal)',
    (raw) => {
      expect(() => parsePricing(raw)).toThrow(/pricing/);
    },
  );
});

describe('loadProducts', () => {
  const attributes = {
    B000000001: {
      attributes: ['warm'],
      instruction: 'Find me hats with warm',
      instruction_attributes: ['warm'],
    },
  };

  it('turns a raw product into the processed fields', () => {
    const raw = rawProduct({
      small_description: 'One bullet as a string',
      customization_options: {
        Color: null,
        Size: [{ value: ' 38 / 40 / 41 mm ', image: 'img' }, { value: 'Large' }],
        'Pattern Name': [],
      },
    });
    const { products } = loadProducts({ items: [raw], attributes }, { goalMode: 'synthetic' });
    expect(products).toEqual<WebshopProduct[]>([
      {
        asin: 'B000000001',
        name: 'Red Hat',
        Title: 'Red Hat',
        Description: 'A red hat.',
        BulletPoints: ['One bullet as a string'],
        Reviews: [],
        Rating: 'N.A.',
        pricing: [10],
        Price: '$10.0',
        options: { size: ['38  |  40  |  41 mm', 'large'], 'pattern name': [] },
        option_to_image: { '38  |  40  |  41 mm': 'img', large: null },
        Attributes: ['warm'],
        MainImage: 'https://example.invalid/a.jpg',
        query: 'hats',
        category: 'fashion',
        product_category: 'Clothing › Hats',
        instruction_text: 'Find me hats with warm',
        instruction_attributes: ['warm'],
        customization_options: raw.customization_options as WebshopProduct['customization_options'],
        full_description: 'A red hat.',
        small_description: 'One bullet as a string',
        images: ['https://example.invalid/a.jpg', 'https://example.invalid/b.jpg'],
      },
    ]);
  });

  it("skips asin 'nan', asins over 10 characters and repeated asins (first wins)", () => {
    const items = [
      rawProduct({ asin: 'nan', name: 'skip' }),
      rawProduct({ asin: 'B0000000011', name: 'too long' }),
      rawProduct({ name: 'first' }),
      rawProduct({ name: 'second', pricing: 'not a price' }),
    ];
    const { products } = loadProducts({ items, attributes }, { goalMode: 'synthetic' });
    expect(products.map((product) => product.name)).toEqual(['first']);
  });

  it('uses DUMMY_ATTR without an attribute entry, and human instructions only when present', () => {
    const items = [rawProduct(), rawProduct({ asin: 'B000000002' })];
    const humanInstructions = {
      B000000002: [
        {
          instruction: 'i want a hat.',
          instruction_attributes: ['warm'],
          instruction_options: ['red'],
        },
      ],
    };
    const { products } = loadProducts(
      { items, attributes: {}, humanInstructions },
      { goalMode: 'human' },
    );
    expect(products.map((product) => product.Attributes)).toEqual([[DUMMY_ATTR], [DUMMY_ATTR]]);
    expect(products[0]).not.toHaveProperty('instructions');
    expect(products[0]).not.toHaveProperty('instruction_text');
    expect(products[1]?.instructions).toEqual(humanInstructions.B000000002);
  });

  it('names file and record for malformed products', () => {
    const missingAsin = captureError(() =>
      loadProducts(
        {
          items: [rawProduct(), rawProduct({ asin: undefined })],
          attributes,
          fileNames: { items: 'items.json' },
        },
        { goalMode: 'synthetic' },
      ),
    );
    expect(missingAsin.file).toBe('items.json');
    expect(missingAsin.record).toEqual({ index: 1, asin: undefined });
    expect(missingAsin.message).toMatch(/^items\.json: record #1: asin: /);

    const wrongType = captureError(() =>
      loadProducts(
        {
          items: [rawProduct({ images: 'x.jpg' })],
          attributes,
          fileNames: { items: 'items.json' },
        },
        { goalMode: 'synthetic' },
      ),
    );
    expect(wrongType.record).toEqual({ index: 0, asin: 'B000000001' });
    expect(wrongType.issues.join()).toMatch(/images/);
    expect(wrongType.message).toMatch(/record #0, asin B000000001/);

    const badPrice = captureError(() =>
      loadProducts(
        { items: [rawProduct({ pricing: '12.99' })], attributes },
        { goalMode: 'synthetic' },
      ),
    );
    expect(badPrice.message).toMatch(
      /items file: record #0, asin B000000001: pricing "12.99" has no \$ amount/,
    );

    const noImages = captureError(() =>
      loadProducts({ items: [rawProduct({ images: [] })], attributes }, { goalMode: 'synthetic' }),
    );
    expect(noImages.issues.join()).toMatch(/images/);

    const notAList = captureError(() =>
      loadProducts({ items: { a: 1 }, attributes }, { goalMode: 'synthetic' }),
    );
    expect(notAList.message).toMatch(/expected a JSON list of products/);
  });

  it('names file and key for malformed attribute and human instruction entries', () => {
    const badAttributes = captureError(() =>
      loadProducts(
        {
          items: [],
          attributes: { B1: { attributes: 'warm' } },
          fileNames: { attributes: 'items_ins_v2.json' },
        },
        { goalMode: 'synthetic' },
      ),
    );
    expect(badAttributes.file).toBe('items_ins_v2.json');
    expect(badAttributes.record).toEqual({ key: 'B1' });
    expect(badAttributes.message).toMatch(/^items_ins_v2\.json: key "B1": attributes: /);

    const badHuman = captureError(() =>
      loadProducts(
        {
          items: [],
          attributes: {},
          humanInstructions: { B1: [{ instruction: 'x', instruction_attributes: [] }] },
        },
        { goalMode: 'human' },
      ),
    );
    expect(badHuman.record).toEqual({ key: 'B1', index: 0 });
    expect(badHuman.issues.join()).toMatch(/instruction_options/);

    const missingHumanFile = captureError(() =>
      loadProducts({ items: [], attributes: {} }, { goalMode: 'human' }),
    );
    expect(missingHumanFile.message).toMatch(/human goals need/);

    const missingEntry = captureError(() =>
      loadProducts({ items: [rawProduct()], attributes: {} }, { goalMode: 'synthetic' }),
    );
    expect(missingEntry.record).toEqual({ key: 'B000000001' });
  });
});

describe('loadCatalogFiles', () => {
  it('reports broken JSON and unreadable files with the file name', () => {
    const broken = captureError(() => readCatalogJsonFile(pathIn('SOURCE.md')));
    expect(broken.file).toBe(pathIn('SOURCE.md'));
    expect(broken.message).toMatch(/SOURCE\.md: not valid JSON/);
    const missing = captureError(() =>
      loadCatalogFiles({
        itemsFile: pathIn('fixtures/nope.json'),
        attributesFile: pathIn('data/items_ins_v2_1000.json'),
      }),
    );
    expect(missing.message).toMatch(/nope\.json: cannot read file/);
  });

  it('loads data/items_ins_v2_1000.json: 1,000 entries, 415 synthetic instructions, 185 without attributes', () => {
    const attributesFile = pathIn('data/items_ins_v2_1000.json');
    const asins = Object.keys(readCatalogJsonFile(attributesFile) as Record<string, unknown>);
    const source = loadCatalogFiles({
      itemsFile: pathIn('fixtures/synthetic_input/items_shuffle_synthetic.json'),
      attributesFile,
    });
    source.items = asins.map((asin) => rawProduct({ asin }));
    const sut = buildWebshopCatalog(source, { goalMode: 'synthetic', priceSeed: 0 });
    expect(sut.products).toHaveLength(1000);
    expect(sut.products.filter((product) => product.instruction_text !== null)).toHaveLength(415);
    expect(sut.products.filter((product) => product.Attributes.length === 0)).toHaveLength(185);
    expect(sut.goals).toHaveLength(415);
  });

  it('loads all 3,000 search products, whose search contents match the Lucene fixture', () => {
    const search = JSON.parse(readFileSync(pathIn('fixtures/search_bm25.json'), 'utf8')) as {
      documents: { id: string; contents: string }[];
    };
    const items = readCatalogJsonFile(
      pathIn('fixtures/synthetic_input/items_shuffle_search3000.json'),
    );
    const { products } = loadProducts(
      { items, attributes: {}, humanInstructions: {} },
      { goalMode: 'human' },
    );
    expect(products).toHaveLength(3000);
    const contents = products.map((product) => {
      const optionText = Object.entries(product.options)
        .map(([name, values]) => `${name}: ${values.join(', ')}`)
        .join(', and ');
      return {
        id: product.asin,
        contents: [product.Title, product.Description, product.BulletPoints[0], optionText]
          .join(' ')
          .toLowerCase(),
      };
    });
    expect(contents).toEqual(
      search.documents.map(({ id, contents: text }) => ({ id, contents: text })),
    );
  });
});
