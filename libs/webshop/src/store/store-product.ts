import type { RewardProduct } from '../reward/index.js';

interface StoreProductOption {
  /** Lowercased option name, e.g. `size`. */
  readonly name: string;
  /** Values in listing order, as the agent must click them (`38  |  40  |  41 mm`). */
  readonly values: readonly string[];
}

/** What the store shows of a product; field comments name the original's processed-product key. */
export interface StoreProduct {
  readonly asin: string;
  /** `Title` */
  readonly title: string;
  /** `Description`; `null` renders as `None`, as Jinja does. */
  readonly description: string | null;
  /** `BulletPoints` */
  readonly bulletPoints: readonly string[];
  /** `Price`, the display string (`$10.99`, `$12.99 to $15.49`, `$100.0`). */
  readonly priceText: string;
  /** `options`, in insertion order. */
  readonly options: readonly StoreProductOption[];
  /** `option_to_image` */
  readonly optionImages: ReadonlyMap<string, string | null>;
  /** `Attributes` */
  readonly attributes: readonly string[];
  /** `MainImage` */
  readonly mainImage: string | null;
  readonly category: string;
  readonly query: string;
  /** `product_category` */
  readonly productCategory: string;
}

/** The keys of a processed product (as `load_products` leaves it) that the store reads. */
export interface ProcessedProduct {
  readonly asin: string;
  readonly Title: string;
  readonly Description: string | null;
  readonly BulletPoints: readonly string[];
  readonly Price: string;
  readonly options: Readonly<Record<string, readonly string[]>>;
  readonly option_to_image: Readonly<Record<string, string | null>>;
  readonly Attributes: readonly string[];
  readonly MainImage: string | null;
  readonly category: string;
  readonly query: string;
  readonly product_category: string;
}

/** A product as both the store and the reward read it (a loaded `WebshopProduct` is one). */
export type CatalogStoreProduct = ProcessedProduct & RewardProduct;

export function storeProductFromProcessed(record: ProcessedProduct): StoreProduct {
  return {
    asin: record.asin,
    title: record.Title,
    description: record.Description,
    bulletPoints: record.BulletPoints,
    priceText: record.Price,
    options: Object.entries(record.options).map(([name, values]) => ({ name, values })),
    optionImages: new Map(Object.entries(record.option_to_image)),
    attributes: record.Attributes,
    mainImage: record.MainImage,
    category: record.category,
    query: record.query,
    productCategory: record.product_category,
  };
}
