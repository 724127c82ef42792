// Generated catalogues written in the official WebShop file formats (items_shuffle /
// items_ins_v2 / items_human_ins), record by record, for the import and scale benchmarks.
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { generateDemoProducts } from '@benchfleet/webshop';

export interface CatalogFiles {
  items: string;
  attributes: string;
  human: string;
}

async function write(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'finish');
}

/** Writes the three files of `products` generated products into `dir`, as the official ones are laid out. */
export async function writeCatalogFiles(
  dir: string,
  products: number,
  seed: number,
): Promise<CatalogFiles> {
  const paths = {
    items: join(dir, 'items_shuffle.json'),
    attributes: join(dir, 'items_ins_v2.json'),
    human: join(dir, 'items_human_ins.json'),
  };
  const items = createWriteStream(paths.items);
  const attributes = createWriteStream(paths.attributes);
  const human = createWriteStream(paths.human);
  await write(items, '[');
  await write(attributes, '{');
  await write(human, '{');
  let humanWritten = 0;
  let index = 0;
  for (const record of generateDemoProducts({ products, seed })) {
    const separator = index === 0 ? '' : ', ';
    await write(items, separator + JSON.stringify(record.product));
    await write(
      attributes,
      `${separator}${JSON.stringify(record.product.asin)}: ${JSON.stringify(record.attributes)}`,
    );
    if (record.humanInstructions.length > 0) {
      await write(
        human,
        `${humanWritten === 0 ? '' : ', '}${JSON.stringify(record.product.asin)}: ${JSON.stringify(record.humanInstructions)}`,
      );
      humanWritten += 1;
    }
    index += 1;
  }
  await write(items, ']');
  await write(attributes, '}');
  await write(human, '}');
  await Promise.all([close(items), close(attributes), close(human)]);
  return paths;
}
