import { readFileSync } from 'node:fs';
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
    throw new CatalogFormatError(path, undefined, [`cannot read file: ${error instanceof Error ? error.message : String(error)}`], {
      cause: error,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CatalogFormatError(path, undefined, [`not valid JSON: ${error instanceof Error ? error.message : String(error)}`], {
      cause: error,
    });
  }
}

/** Reads the WebShop input files into a CatalogSource for loadProducts / buildWebshopCatalog. */
export function loadCatalogFiles(paths: CatalogFilePaths): CatalogSource {
  const source: CatalogSource = {
    items: readCatalogJsonFile(paths.itemsFile),
    attributes: readCatalogJsonFile(paths.attributesFile),
    fileNames: { items: paths.itemsFile, attributes: paths.attributesFile },
  };
  if (paths.humanInstructionsFile !== undefined) {
    source.humanInstructions = readCatalogJsonFile(paths.humanInstructionsFile);
    source.fileNames = { ...source.fileNames, humanInstructions: paths.humanInstructionsFile };
  }
  return source;
}
