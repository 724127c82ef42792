import type { z } from 'zod';
import { CatalogFormatError, type CatalogRecordRef } from './catalog-format-error.js';
import {
  attributeEntrySchema,
  humanInstructionSchema,
  rawProductAsinSchema,
  rawProductSchema,
  type AttributeEntry,
  type HumanInstruction,
  type WebshopProduct,
} from './catalog-schemas.js';
import { parsePricing } from './product-prices.js';
import { pythonLength, pythonStrip } from './python-text.js';

export const DUMMY_ATTR = 'DUMMY_ATTR';

export type GoalMode = 'human' | 'synthetic';

/** Parsed (not yet validated) contents of the three WebShop input files. */
export type CatalogSource = {
  /** items_shuffle*.json: a list of raw products. */
  items: unknown;
  /** items_ins_v2*.json: asin → { attributes, instruction?, instruction_attributes? }. */
  attributes: unknown;
  /** items_human_ins.json: asin → list of human instructions. Needed for human goals only. */
  humanInstructions?: unknown;
  /** Names used in error messages (file paths when read from disk). */
  fileNames?: { items?: string; attributes?: string; humanInstructions?: string };
};

export type LoadProductsOptions = {
  goalMode: GoalMode;
  /** Keep only the first N raw products (file order), like `num_products`. */
  numProducts?: number;
};

export type LoadedProducts = {
  products: WebshopProduct[];
  productByAsin: Map<string, WebshopProduct>;
  attributeToAsins: Map<string, Set<string>>;
};

function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseAttributeFile(json: unknown, file: string): Map<string, AttributeEntry> {
  if (!isPlainObject(json)) throw new CatalogFormatError(file, undefined, ['expected a JSON object keyed by asin']);
  const entries = new Map<string, AttributeEntry>();
  for (const [asin, value] of Object.entries(json)) {
    const parsed = attributeEntrySchema.safeParse(value);
    if (!parsed.success) throw new CatalogFormatError(file, { key: asin }, formatIssues(parsed.error));
    entries.set(asin, parsed.data);
  }
  return entries;
}

function parseHumanInstructionFile(json: unknown, file: string): Map<string, HumanInstruction[]> {
  if (!isPlainObject(json)) throw new CatalogFormatError(file, undefined, ['expected a JSON object keyed by asin']);
  const entries = new Map<string, HumanInstruction[]>();
  for (const [asin, value] of Object.entries(json)) {
    if (!Array.isArray(value)) throw new CatalogFormatError(file, { key: asin }, ['expected a list of instructions']);
    const instructions = value.map((item, index) => {
      const parsed = humanInstructionSchema.safeParse(item);
      if (!parsed.success) throw new CatalogFormatError(file, { key: asin, index }, formatIssues(parsed.error));
      return parsed.data;
    });
    entries.set(asin, instructions);
  }
  return entries;
}

function asinOf(value: unknown): string | undefined {
  return isPlainObject(value) && typeof value.asin === 'string' ? value.asin : undefined;
}

function buildOptions(
  customizationOptions: WebshopProduct['customization_options'],
): Pick<WebshopProduct, 'options' | 'option_to_image'> {
  const options: Record<string, string[]> = {};
  const optionToImage: Record<string, string | null> = {};
  if (customizationOptions === null || customizationOptions === '') return { options, option_to_image: optionToImage };
  for (const [rawName, contents] of Object.entries(customizationOptions)) {
    if (contents === null) continue;
    const values: string[] = [];
    for (const entry of contents) {
      const value = pythonStrip(entry.value).replaceAll('/', ' | ').toLowerCase();
      values.push(value);
      optionToImage[value] = entry.image ?? null;
    }
    options[rawName.toLowerCase()] = values;
  }
  return { options, option_to_image: optionToImage };
}

/**
 * `load_products`: cleans the raw products (asin 'nan' or longer than 10 characters skipped, first
 * occurrence of an asin wins), parses prices and options, attaches attributes from items_ins_v2 (or
 * DUMMY_ATTR) and the human or synthetic instructions. Hidden prices are drawn separately
 * (generateProductPrices). Malformed records raise CatalogFormatError naming file and record.
 */
export function loadProducts(source: CatalogSource, options: LoadProductsOptions): LoadedProducts {
  const itemsFile = source.fileNames?.items ?? 'items file';
  const attributesFile = source.fileNames?.attributes ?? 'attributes file';
  const humanFile = source.fileNames?.humanInstructions ?? 'human instructions file';

  if (!Array.isArray(source.items)) throw new CatalogFormatError(itemsFile, undefined, ['expected a JSON list of products']);
  const attributes = parseAttributeFile(source.attributes, attributesFile);
  let humanInstructions: Map<string, HumanInstruction[]> | undefined;
  if (options.goalMode === 'human') {
    if (source.humanInstructions === undefined) {
      throw new CatalogFormatError(humanFile, undefined, ['human goals need the human instructions file (items_human_ins.json)']);
    }
    humanInstructions = parseHumanInstructionFile(source.humanInstructions, humanFile);
  }

  const rawItems: readonly unknown[] =
    options.numProducts === undefined ? source.items : source.items.slice(0, Math.max(0, options.numProducts));
  const products: WebshopProduct[] = [];
  const seenAsins = new Set<string>();

  rawItems.forEach((rawItem, index) => {
    const record: CatalogRecordRef = { index, asin: asinOf(rawItem) };
    const withAsin = rawProductAsinSchema.safeParse(rawItem);
    if (!withAsin.success) throw new CatalogFormatError(itemsFile, record, formatIssues(withAsin.error));
    const asin = withAsin.data.asin;
    if (asin === 'nan' || pythonLength(asin) > 10) return;
    if (seenAsins.has(asin)) return;
    seenAsins.add(asin);

    const parsed = rawProductSchema.safeParse(rawItem);
    if (!parsed.success) throw new CatalogFormatError(itemsFile, record, formatIssues(parsed.error));
    const raw = parsed.data;

    let pricing: ReturnType<typeof parsePricing>;
    try {
      pricing = parsePricing(raw.pricing);
    } catch (error) {
      throw new CatalogFormatError(itemsFile, record, [error instanceof Error ? error.message : String(error)], { cause: error });
    }

    const attributeEntry = attributes.get(asin);
    const product: WebshopProduct = {
      asin,
      name: raw.name,
      Title: raw.name,
      Description: raw.full_description,
      BulletPoints: Array.isArray(raw.small_description) ? [...raw.small_description] : [raw.small_description],
      Reviews: [],
      Rating: 'N.A.',
      pricing: pricing.pricing,
      Price: pricing.Price,
      ...buildOptions(raw.customization_options),
      Attributes: attributeEntry?.attributes !== undefined ? [...attributeEntry.attributes] : [DUMMY_ATTR],
      MainImage: raw.images[0] ?? '',
      query: pythonStrip(raw.query.toLowerCase()),
      category: raw.category,
      product_category: raw.product_category,
      customization_options: raw.customization_options,
      full_description: raw.full_description,
      small_description: raw.small_description,
      images: raw.images,
    };

    if (humanInstructions !== undefined) {
      const instructions = humanInstructions.get(asin);
      if (instructions !== undefined) product.instructions = instructions;
    } else {
      if (attributeEntry === undefined) {
        throw new CatalogFormatError(attributesFile, { key: asin }, [
          `asin ${asin} (record #${index} of ${itemsFile}) is missing; synthetic goals need an entry for every product`,
        ]);
      }
      product.instruction_text = attributeEntry.instruction ?? null;
      product.instruction_attributes = attributeEntry.instruction_attributes ?? null;
    }
    products.push(product);
  });

  const attributeToAsins = new Map<string, Set<string>>();
  const productByAsin = new Map<string, WebshopProduct>();
  for (const product of products) {
    for (const attribute of product.Attributes) {
      let asins = attributeToAsins.get(attribute);
      if (asins === undefined) attributeToAsins.set(attribute, (asins = new Set()));
      asins.add(product.asin);
    }
    productByAsin.set(product.asin, product);
  }
  return { products, productByAsin, attributeToAsins };
}
