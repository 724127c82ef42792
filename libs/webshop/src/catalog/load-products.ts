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
  if (!isPlainObject(json))
    throw new CatalogFormatError(file, undefined, ['expected a JSON object keyed by asin']);
  const entries = new Map<string, AttributeEntry>();
  for (const [asin, value] of Object.entries(json)) {
    const parsed = attributeEntrySchema.safeParse(value);
    if (!parsed.success)
      throw new CatalogFormatError(file, { key: asin }, formatIssues(parsed.error));
    entries.set(asin, parsed.data);
  }
  return entries;
}

function parseHumanInstructionFile(json: unknown, file: string): Map<string, HumanInstruction[]> {
  if (!isPlainObject(json))
    throw new CatalogFormatError(file, undefined, ['expected a JSON object keyed by asin']);
  const entries = new Map<string, HumanInstruction[]>();
  for (const [asin, value] of Object.entries(json)) {
    if (!Array.isArray(value))
      throw new CatalogFormatError(file, { key: asin }, ['expected a list of instructions']);
    const instructions = value.map((item, index) => {
      const parsed = humanInstructionSchema.safeParse(item);
      if (!parsed.success)
        throw new CatalogFormatError(file, { key: asin, index }, formatIssues(parsed.error));
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
  if (customizationOptions === null || customizationOptions === '')
    return { options, option_to_image: optionToImage };
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

/** The human instructions (human goals) or the synthetic ones (attributes file) products carry. */
export type InstructionSource =
  { mode: 'human'; byAsin: Map<string, HumanInstruction[]> } | { mode: 'synthetic' };

export type CatalogFileNames = { items: string; attributes: string; humanInstructions: string };

/** Parses the attributes file and, for human goals, the human instructions file. */
export function parseInstructionFiles(
  source: Pick<CatalogSource, 'attributes' | 'humanInstructions' | 'fileNames'>,
  goalMode: GoalMode,
): {
  attributes: Map<string, AttributeEntry>;
  instructions: InstructionSource;
  fileNames: CatalogFileNames;
} {
  const fileNames: CatalogFileNames = {
    items: source.fileNames?.items ?? 'items file',
    attributes: source.fileNames?.attributes ?? 'attributes file',
    humanInstructions: source.fileNames?.humanInstructions ?? 'human instructions file',
  };
  const attributes = parseAttributeFile(source.attributes, fileNames.attributes);
  if (goalMode === 'synthetic')
    return { attributes, instructions: { mode: 'synthetic' }, fileNames };
  if (source.humanInstructions === undefined) {
    throw new CatalogFormatError(fileNames.humanInstructions, undefined, [
      'human goals need the human instructions file (items_human_ins.json)',
    ]);
  }
  return {
    attributes,
    instructions: {
      mode: 'human',
      byAsin: parseHumanInstructionFile(source.humanInstructions, fileNames.humanInstructions),
    },
    fileNames,
  };
}

/**
 * `load_products`, one raw product at a time: asin 'nan' or longer than 10 characters is skipped,
 * the first occurrence of an asin wins; prices and options are parsed, attributes come from
 * items_ins_v2 (or DUMMY_ATTR) and instructions from the human or synthetic source. Malformed
 * records raise CatalogFormatError naming file and record. Keeps only the set of asins seen, so a
 * catalog of any size can stream through it.
 */
export class ProductCleaner {
  private readonly seenAsins = new Set<string>();

  constructor(
    private readonly attributes: ReadonlyMap<string, AttributeEntry>,
    private readonly instructions: InstructionSource,
    private readonly fileNames: CatalogFileNames,
  ) {}

  /** The cleaned product, or undefined for a record `load_products` skips. `index` is its position in the file. */
  clean(rawItem: unknown, index: number): WebshopProduct | undefined {
    const itemsFile = this.fileNames.items;
    const record: CatalogRecordRef = { index, asin: asinOf(rawItem) };
    const withAsin = rawProductAsinSchema.safeParse(rawItem);
    if (!withAsin.success)
      throw new CatalogFormatError(itemsFile, record, formatIssues(withAsin.error));
    const asin = withAsin.data.asin;
    if (asin === 'nan' || pythonLength(asin) > 10) return undefined;
    if (this.seenAsins.has(asin)) return undefined;
    this.seenAsins.add(asin);

    const parsed = rawProductSchema.safeParse(rawItem);
    if (!parsed.success)
      throw new CatalogFormatError(itemsFile, record, formatIssues(parsed.error));
    const raw = parsed.data;

    let pricing: ReturnType<typeof parsePricing>;
    try {
      pricing = parsePricing(raw.pricing);
    } catch (error) {
      throw new CatalogFormatError(
        itemsFile,
        record,
        [error instanceof Error ? error.message : String(error)],
        { cause: error },
      );
    }

    const attributeEntry = this.attributes.get(asin);
    const product: WebshopProduct = {
      asin,
      name: raw.name,
      Title: raw.name,
      Description: raw.full_description,
      BulletPoints: Array.isArray(raw.small_description)
        ? [...raw.small_description]
        : [raw.small_description],
      Reviews: [],
      Rating: 'N.A.',
      pricing: pricing.pricing,
      Price: pricing.Price,
      ...buildOptions(raw.customization_options),
      Attributes:
        attributeEntry?.attributes !== undefined ? [...attributeEntry.attributes] : [DUMMY_ATTR],
      MainImage: raw.images[0] ?? '',
      query: pythonStrip(raw.query.toLowerCase()),
      category: raw.category,
      product_category: raw.product_category,
      customization_options: raw.customization_options,
      full_description: raw.full_description,
      small_description: raw.small_description,
      images: raw.images,
    };

    if (this.instructions.mode === 'human') {
      const instructions = this.instructions.byAsin.get(asin);
      if (instructions !== undefined) product.instructions = instructions;
    } else {
      if (attributeEntry === undefined) {
        throw new CatalogFormatError(this.fileNames.attributes, { key: asin }, [
          `asin ${asin} (record #${index} of ${itemsFile}) is missing; synthetic goals need an entry for every product`,
        ]);
      }
      product.instruction_text = attributeEntry.instruction ?? null;
      product.instruction_attributes = attributeEntry.instruction_attributes ?? null;
    }
    return product;
  }
}

/** Whether a cleaned product yields goals in the given mode (what getHumanGoals / getSyntheticGoals read). */
export function carriesGoals(product: WebshopProduct): boolean {
  return (
    product.instructions !== undefined ||
    (product.instruction_text !== undefined && product.instruction_text !== null)
  );
}

/** The parsed items file as a list, or an error naming the file. */
export function rawItemsOf(source: CatalogSource): readonly unknown[] {
  if (!Array.isArray(source.items))
    throw new CatalogFormatError(source.fileNames?.items ?? 'items file', undefined, [
      'expected a JSON list of products',
    ]);
  return source.items;
}

/** The lookup tables the store uses: asin → product, attribute → asins. */
export function indexProducts(
  products: readonly WebshopProduct[],
): Omit<LoadedProducts, 'products'> {
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
  return { productByAsin, attributeToAsins };
}

/** `load_products` over a parsed items list (see ProductCleaner), with the lookup tables the store uses. */
export function loadProducts(source: CatalogSource, options: LoadProductsOptions): LoadedProducts {
  const items = rawItemsOf(source);
  const { attributes, instructions, fileNames } = parseInstructionFiles(source, options.goalMode);
  const rawItems =
    options.numProducts === undefined ? items : items.slice(0, Math.max(0, options.numProducts));
  const cleaner = new ProductCleaner(attributes, instructions, fileNames);
  const products: WebshopProduct[] = [];
  rawItems.forEach((rawItem, index) => {
    const product = cleaner.clean(rawItem, index);
    if (product !== undefined) products.push(product);
  });
  return { products, ...indexProducts(products) };
}
