import type { SelectedOptions } from './page-links.js';
import { pythonStrip } from '../catalog/index.js';
import type { StoreProduct } from './store-product.js';

/** Results the original asks its search engine for (`SEARCH_RETURN_N`). */
export const SEARCH_RETURN_N = 50;

export interface StoreGoal {
  /** The goal's `instruction_text`, shown on every page after `Instruction:`. */
  readonly instructionText: string;
  /** Sampling weight for episodes reset without a goal index. */
  readonly weight: number;
  /** The goal as the original keeps it (asin, attributes, goal_options, price_upper, …), for the site's done page. */
  readonly record?: Readonly<Record<string, unknown>>;
}

/** Ranked ASINs for a query, best first, at most `limit`. */
export interface StoreSearch {
  search(query: string, limit: number): readonly string[];
}

export interface PurchaseToScore {
  readonly goalIndex: number;
  readonly asin: string;
  readonly product: StoreProduct;
  /** The hidden price (`product_prices[asin]`), not the displayed one. */
  readonly price: number;
  /** The session's selected options in selection order; may be empty. */
  readonly options: SelectedOptions;
}

export interface PurchaseScore {
  readonly reward: number;
  /** The original's verbose reward info (`r_type`, `r_att`, `w_att`, …). */
  readonly info: Readonly<Record<string, unknown>>;
}

export type ScorePurchase = (purchase: PurchaseToScore) => PurchaseScore;

export interface StoreConfig {
  /** Products in catalog order (the order debug queries list them in). ASINs must be unique. */
  readonly products: readonly StoreProduct[];
  /** Hidden price per ASIN. */
  readonly prices: ReadonlyMap<string, number>;
  /** Goals in goal-index order (after the seed-233 shuffle). */
  readonly goals: readonly StoreGoal[];
  readonly search: StoreSearch;
  readonly scorePurchase: ScorePurchase;
  /** Uniform [0, 1) source for goal sampling and the `<r>` debug query; defaults to Math.random. */
  readonly random?: () => number;
  /** Distinct queries whose hits are kept for all episodes; 0 disables. Default 2048. */
  readonly searchCacheSize?: number;
}

/**
 * The shared, immutable part of the environment: products, hidden prices, goals and search.
 * One instance serves any number of concurrent episodes and HTTP sessions.
 */
export class Store {
  readonly goals: readonly StoreGoal[];
  readonly products: readonly StoreProduct[];
  readonly random: () => number;
  private readonly productsByAsin: ReadonlyMap<string, StoreProduct>;
  private readonly prices: ReadonlyMap<string, number>;
  private readonly searchEngine: StoreSearch;
  private readonly scorer: ScorePurchase;
  private readonly searchCache = new Map<string, readonly StoreProduct[]>();
  private readonly searchCacheSize: number;
  private cumulativeWeights: number[] | null = null;
  private asinsByAttribute: Map<string, Set<string>> | null = null;

  constructor(config: StoreConfig) {
    this.products = config.products;
    this.productsByAsin = new Map(config.products.map((product) => [product.asin, product]));
    this.prices = config.prices;
    this.goals = config.goals;
    this.searchEngine = config.search;
    this.scorer = config.scorePurchase;
    this.random = config.random ?? Math.random;
    this.searchCacheSize = config.searchCacheSize ?? 2048;
  }

  product(asin: string): StoreProduct | undefined {
    return this.productsByAsin.get(asin);
  }

  hiddenPrice(asin: string): number | undefined {
    return this.prices.get(asin);
  }

  goal(index: number): StoreGoal {
    const goal = Number.isInteger(index) ? this.goals[index] : undefined;
    if (goal === undefined) throw new RangeError(`goal index ${index} is outside 0..${this.goals.length - 1}`);
    return goal;
  }

  /**
   * A goal index drawn by weight the way the original's `random_idx` does it: bisect a uniform draw
   * over `[0, w0, w0+w1, …]` and cap at the second-to-last boundary (which shifts picks by one goal).
   */
  sampleGoalIndex(): number {
    if (this.goals.length === 0) throw new RangeError('the store has no goals');
    if (this.cumulativeWeights === null) {
      const sums = [0];
      let total = 0;
      for (const goal of this.goals) sums.push((total += goal.weight));
      this.cumulativeWeights = sums;
    }
    const sums = this.cumulativeWeights;
    const position = (sums[sums.length - 1] ?? 0) * this.random();
    let low = 0;
    let high = sums.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (position < (sums[middle] ?? 0)) high = middle;
      else low = middle + 1;
    }
    return Math.min(low, sums.length - 2);
  }

  /**
   * The products a search for these keywords lists, best first: at most 50 from the search
   * engine, or for the debug queries `<r>`, `<a> attr`, `<c> category`, `<q> query` every match.
   */
  searchProducts(keywords: readonly string[]): readonly StoreProduct[] {
    const [first, ...rest] = keywords;
    switch (first) {
      case '<r>':
        return this.randomProducts(SEARCH_RETURN_N);
      case '<a>': {
        const asins = this.attributeIndex().get(pythonStrip(rest.join(' ')));
        return asins === undefined ? [] : this.products.filter((product) => asins.has(product.asin));
      }
      case '<c>': {
        const category = pythonStrip(rest[0] ?? '');
        return this.products.filter((product) => product.category === category);
      }
      case '<q>': {
        const query = pythonStrip(rest.join(' '));
        return this.products.filter((product) => product.query === query);
      }
      default:
        return this.rankedProducts(keywords.join(' '));
    }
  }

  scorePurchase(goalIndex: number, asin: string, options: SelectedOptions): PurchaseScore & { readonly price: number } {
    const product = this.productsByAsin.get(asin);
    const price = this.prices.get(asin);
    if (product === undefined || price === undefined) throw new RangeError(`no product or price for ASIN ${asin}`);
    return { ...this.scorer({ goalIndex, asin, product, price, options }), price };
  }

  private rankedProducts(query: string): readonly StoreProduct[] {
    const cached = this.searchCache.get(query);
    if (cached !== undefined) {
      this.searchCache.delete(query);
      this.searchCache.set(query, cached);
      return cached;
    }
    const hits: StoreProduct[] = [];
    for (const asin of this.searchEngine.search(query, SEARCH_RETURN_N)) {
      const product = this.productsByAsin.get(asin);
      if (product !== undefined) hits.push(product);
    }
    if (this.searchCacheSize > 0) {
      if (this.searchCache.size >= this.searchCacheSize) {
        const oldest = this.searchCache.keys().next();
        if (oldest.done !== true) this.searchCache.delete(oldest.value);
      }
      this.searchCache.set(query, hits);
    }
    return hits;
  }

  private randomProducts(count: number): StoreProduct[] {
    const pool = [...this.products];
    const take = Math.min(count, pool.length);
    for (let i = 0; i < take; i++) {
      const j = i + Math.floor(this.random() * (pool.length - i));
      const chosen = pool[j];
      const current = pool[i];
      if (chosen === undefined || current === undefined) break;
      pool[i] = chosen;
      pool[j] = current;
    }
    return pool.slice(0, take);
  }

  private attributeIndex(): Map<string, Set<string>> {
    if (this.asinsByAttribute === null) {
      const index = new Map<string, Set<string>>();
      for (const product of this.products) {
        for (const attribute of product.attributes) {
          let asins = index.get(attribute);
          if (asins === undefined) index.set(attribute, (asins = new Set()));
          asins.add(product.asin);
        }
      }
      this.asinsByAttribute = index;
    }
    return this.asinsByAttribute;
  }
}

export function createStore(config: StoreConfig): Store {
  return new Store(config);
}
