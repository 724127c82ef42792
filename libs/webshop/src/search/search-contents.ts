// The `contents` field WebShop's convert_product_file_format.py writes for each product: Title,
// Description, the first bullet point and the option text joined with single spaces, lowercased.
// A product without options keeps the trailing space.

import type { SearchDocument } from './search-index.js';

/** The processed-product fields the search document is built from (load_products naming). */
export interface SearchContentsSource {
  Title: string;
  Description: string;
  BulletPoints: readonly string[];
  /** Option name → values, in insertion order. */
  options: ReadonlyMap<string, readonly string[]> | Readonly<Record<string, readonly string[]>>;
}

interface RawOptionValue {
  value: string;
  image?: string | null;
}

/** The raw items_shuffle*.json fields that end up in the search document. */
export interface RawProductSearchFields {
  asin: string;
  name: string;
  full_description: string;
  small_description: string | readonly string[];
  customization_options: '' | null | Readonly<Record<string, readonly RawOptionValue[] | null>>;
}

// Python's str.strip() whitespace (str.isspace), which differs from String.prototype.trim().
const PYTHON_LEADING_SPACE =
  /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;
const PYTHON_TRAILING_SPACE =
  /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/;

export function pythonStrip(text: string): string {
  return text.replace(PYTHON_LEADING_SPACE, '').replace(PYTHON_TRAILING_SPACE, '');
}

function optionEntries(
  options: SearchContentsSource['options'],
): Iterable<readonly [string, readonly string[]]> {
  return options instanceof Map ? options.entries() : Object.entries(options);
}

export function buildSearchContents(product: SearchContentsSource): string {
  const firstBullet = product.BulletPoints[0];
  if (firstBullet === undefined) {
    // The original indexer fails the same way (BulletPoints[0] of an empty list).
    throw new Error(`product "${product.Title}" has no bullet point to index`);
  }
  const optionText = Array.from(
    optionEntries(product.options),
    ([name, values]) => `${name}: ${values.join(', ')}`,
  ).join(', and ');
  return [product.Title, product.Description, firstBullet, optionText].join(' ').toLowerCase();
}

/** Option name → values as load_products processes customization_options. */
function processedOptions(
  customizationOptions: RawProductSearchFields['customization_options'],
): Map<string, string[]> {
  const options = new Map<string, string[]>();
  if (!customizationOptions) return options;
  for (const [rawName, entries] of Object.entries(customizationOptions)) {
    if (entries === null) continue;
    const values = entries.map((entry) =>
      pythonStrip(entry.value).replaceAll('/', ' | ').toLowerCase(),
    );
    options.set(rawName.toLowerCase(), values);
  }
  return options;
}

export function buildSearchContentsFromRaw(raw: RawProductSearchFields): string {
  const bullets =
    typeof raw.small_description === 'string' ? [raw.small_description] : raw.small_description;
  return buildSearchContents({
    Title: raw.name,
    Description: raw.full_description,
    BulletPoints: bullets,
    options: processedOptions(raw.customization_options),
  });
}

export function searchDocumentFromRaw(raw: RawProductSearchFields): SearchDocument {
  return { asin: raw.asin, contents: buildSearchContentsFromRaw(raw) };
}
