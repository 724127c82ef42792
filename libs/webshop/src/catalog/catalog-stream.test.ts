import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticCatalogFiles } from '../../test-support/shared-fixtures.js';
import { loadCatalogFiles, readCatalogJsonFile, streamRawItems } from './catalog-files.js';
import { CatalogFormatError } from './catalog-format-error.js';
import { streamWebshopCatalog } from './catalog-stream.js';
import { buildWebshopCatalog, type PricedProduct } from './webshop-catalog.js';

const files = syntheticCatalogFiles;
const instructions = {
  attributes: readCatalogJsonFile(files.attributesFile),
  humanInstructions: readCatalogJsonFile(files.humanInstructionsFile),
  fileNames: {
    items: files.itemsFile,
    attributes: files.attributesFile,
    humanInstructions: files.humanInstructionsFile,
  },
};

async function streamFile(itemsFile: string, options: Parameters<typeof streamWebshopCatalog>[2]) {
  const written: PricedProduct[][] = [];
  const result = await streamWebshopCatalog(
    streamRawItems(itemsFile).items,
    { ...instructions, fileNames: { ...instructions.fileNames, items: itemsFile } },
    options,
    async (batch) => {
      written.push(batch);
    },
  );
  return { ...result, batches: written, products: written.flat() };
}

function scratchFile(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'catalog-stream-')), name);
  writeFileSync(path, text);
  return path;
}

describe.each([
  ['human', undefined],
  ['synthetic', undefined],
  ['human', 7],
  ['synthetic', 7],
] as const)('streaming the items file (%s goals, numProducts %s)', (goalMode, numProducts) => {
  const options = {
    goalMode,
    priceSeed: 1234,
    ...(numProducts === undefined ? {} : { numProducts }),
  };
  const whole = buildWebshopCatalog(loadCatalogFiles(files), options);

  it('yields the products, hidden prices and goals of the whole-file build, in the same order', async () => {
    const streamed = await streamFile(files.itemsFile, { ...options, batchSize: 4 });
    expect(streamed.products.map(({ product }) => product)).toEqual(whole.products);
    expect(streamed.products.map(({ product, price }) => [product.asin, price])).toEqual([
      ...whole.productPrices,
    ]);
    expect(streamed.goals).toEqual(whole.goals);
    expect(streamed.skippedInstructions).toBe(whole.skippedInstructions);
    expect(streamed.batches.slice(0, -1).every((batch) => batch.length === 4)).toBe(true);
    expect(streamed.goals.length).toBeGreaterThan(0);
  });
});

describe('streamRawItems', () => {
  it('reads the list element by element and counts the bytes read', async () => {
    const stream = streamRawItems(files.itemsFile);
    const items: unknown[] = [];
    for await (const item of stream.items) items.push(item);
    expect(items).toEqual(JSON.parse(readFileSync(files.itemsFile, 'utf8')));
    expect(stream.bytesRead()).toBe(stream.bytes);
  });

  it('names the file and the last good record when the JSON breaks', async () => {
    const path = scratchFile(
      'items_broken.json',
      '[{"asin": "B000000001"}, {"asin": "B000000002"}, {"asin": ',
    );
    const read = async () => {
      for await (const _ of streamRawItems(path).items);
    };
    await expect(read()).rejects.toThrow(CatalogFormatError);
    await expect(read()).rejects.toThrow(
      new RegExp(
        `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON after record #1: `,
      ),
    );
  });

  it('refuses a top level that is not a list, and a file that is not there', async () => {
    const object = scratchFile('items_object.json', '{"asin": "B000000001"}');
    const read = async (path: string) => {
      for await (const _ of streamRawItems(path).items);
    };
    await expect(read(object)).rejects.toThrow(`${object}: expected a JSON list of products`);
    expect(() => streamRawItems('/nonexistent/items.json')).toThrow(
      /^\/nonexistent\/items\.json: cannot read file: ENOENT/,
    );
  });

  it('stops reading when the consumer stops (numProducts)', async () => {
    const streamed = await streamFile(files.itemsFile, {
      goalMode: 'synthetic',
      priceSeed: 1,
      numProducts: 2,
    });
    expect(streamed.products).toHaveLength(2);
  });

  it('names the record a bad product stands at, wherever it is in the file', async () => {
    const items = JSON.parse(readFileSync(files.itemsFile, 'utf8')) as Array<
      Record<string, unknown>
    >;
    const broken = items.map((item, i) =>
      i === 5 ? { ...item, asin: 'BBADPRICE1', pricing: '$abc' } : item,
    );
    const path = scratchFile('items_bad_price.json', JSON.stringify(broken));
    await expect(streamFile(path, { goalMode: 'human', priceSeed: 1 })).rejects.toThrow(
      new RegExp(`items_bad_price\\.json: record #5, asin BBADPRICE1: pricing "\\$abc"`),
    );
  });
});
