import { createReadStream, readFileSync, statSync } from 'node:fs';
import { CatalogFormatError } from './catalog-format-error.js';
import type { CatalogSource } from './load-products.js';

export type CatalogFilePaths = {
  /** items_shuffle*.json */
  itemsFile: string;
  /** items_ins_v2*.json */
  attributesFile: string;
  /** items_human_ins.json; needed for human goals only. */
  humanInstructionsFile?: string;
};

/** Reads and JSON-parses one catalog file; unreadable files and broken JSON name the file. */
export function readCatalogJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CatalogFormatError(
      path,
      undefined,
      [`cannot read file: ${error instanceof Error ? error.message : String(error)}`],
      {
        cause: error,
      },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CatalogFormatError(
      path,
      undefined,
      [`not valid JSON: ${error instanceof Error ? error.message : String(error)}`],
      {
        cause: error,
      },
    );
  }
}

/** Reads the attributes file and, when given, the human instructions file: what a catalog needs besides its products. */
export function readInstructionFiles(paths: CatalogFilePaths): Omit<CatalogSource, 'items'> {
  const source: Omit<CatalogSource, 'items'> = {
    attributes: readCatalogJsonFile(paths.attributesFile),
    fileNames: { items: paths.itemsFile, attributes: paths.attributesFile },
  };
  if (paths.humanInstructionsFile !== undefined) {
    source.humanInstructions = readCatalogJsonFile(paths.humanInstructionsFile);
    source.fileNames = { ...source.fileNames, humanInstructions: paths.humanInstructionsFile };
  }
  return source;
}

/** Reads the WebShop input files whole into a CatalogSource for loadProducts / buildWebshopCatalog. */
export function loadCatalogFiles(paths: CatalogFilePaths): CatalogSource {
  return { items: readCatalogJsonFile(paths.itemsFile), ...readInstructionFiles(paths) };
}

export type RawItemsStream = {
  /** The file's raw products, in file order. */
  items: AsyncIterable<unknown>;
  /** Size of the file in bytes. */
  bytes: number;
  /** Bytes read so far (for progress). */
  bytesRead(): number;
};

/**
 * Streams the products of an items_shuffle*.json file one at a time, so files far larger than
 * memory (the full catalogue is ~5 GB, beyond a JavaScript string) can be imported. An unreadable
 * file, a top level that is not a list, and broken JSON name the file and the last good record.
 */
export function streamRawItems(path: string): RawItemsStream {
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch (error) {
    throw new CatalogFormatError(
      path,
      undefined,
      [`cannot read file: ${error instanceof Error ? error.message : String(error)}`],
      { cause: error },
    );
  }
  let read = 0;
  async function* items(): AsyncGenerator<unknown> {
    // Loaded here: only imports stream a catalog file, and other processes start without it.
    const { default: streamArray } = await import('stream-json/streamers/stream-array.js');
    const file = createReadStream(path);
    file.on('data', (chunk) => (read += chunk.length));
    const elements = file.pipe(streamArray.withParserAsStream());
    file.once('error', (error) => elements.destroy(error));
    let next = 0;
    try {
      for await (const element of elements as AsyncIterable<{ key: number; value: unknown }>) {
        next = element.key + 1;
        yield element.value;
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/top-level object should be an array/i.test(message))
        throw new CatalogFormatError(path, undefined, ['expected a JSON list of products'], {
          cause: error,
        });
      const where = next === 0 ? 'before the first record' : `after record #${next - 1}`;
      throw new CatalogFormatError(path, undefined, [`not valid JSON ${where}: ${message}`], {
        cause: error,
      });
    } finally {
      file.destroy();
      elements.destroy();
    }
  }
  return { items: items(), bytes, bytesRead: () => read };
}
