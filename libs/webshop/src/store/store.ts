import type { SelectedOptions } from './page-links.js';
import { LruMap } from '@benchfleet/core';
import { pythonStrip } from '../catalog/index.js';
import type { CatalogStoreProduct, StoreProduct } from './store-product.js';

/** Results the original asks its search engine for (`SEARCH_RETURN_N`). */
const SEARCH_RETURN_N = 50;

export interface StoreGoal {
  /** The goal's `instruction_text`, shown on every page after `Instruction:`. */
  readonly instructionText: string;
  /** Sampling weight for episodes reset without a goal index. */
  readonly weight: number;
  /** The goal as the original keeps it (asin, attributes, goal_options, price_upper, …), for the site's done page. */
  readonly record?: Readonly<Record<string, unknown>>;
}

/**
 * The catalog's goals as the store reads them: held in memory, or fetched on demand (a worker
 * needs only the goals of the episodes it runs). `at` is synchronous: an episode loads its goal
 * first (`Store.loadGoal`).
 */
export interface StoreGoals {
  readonly count: number;
  /** The goal at this index; a RangeError outside 0..count-1, an Error when it was not loaded. */
  at(index: number): StoreGoal;
  /** Makes these goals readable by `at`. */
  load(indices: readonly number[]): Promise<void>;
  /** Sampling weights in goal-index order, when this source can draw goals (held in memory). */
  readonly weights?: readonly number[];
}

/** Goals held in memory, in goal-index order. */
export class InMemoryStoreGoals implements StoreGoals {
  constructor(private readonly goals: readonly StoreGoal[]) {}

  get count(): number {
    return this.goals.length;
  }

  get weights(): readonly number[] {
    return this.goals.map((goal) => goal.weight);
  }

  at(index: number): StoreGoal {
    const goal = Number.isInteger(index) ? this.goals[index] : undefined;
    if (goal === undefined)
      throw new RangeError(`goal index ${index} is outside 0..${this.goals.length - 1}`);
    return goal;
  }

  async load(indices: readonly number[]): Promise<void> {
    for (const index of indices) this.at(index);
  }
}

/** Ranked ASINs for a query, best first, at most `limit`. */
export interface StoreSearch {
  search(query: string, limit: number): readonly string[];
  /** Every asin it returns is a product of the store (an index of the same catalog version): hits need no check. */
  readonly listsOnlyStoreProducts?: boolean;
}

/** One product as the store serves it: what its pages show, what the reward reads, its hidden price. */
export interface CatalogEntry {
  readonly product: StoreProduct;
  readonly record: CatalogStoreProduct;
  /** `product_prices[asin]`, not the displayed price. */
  readonly price: number;
}

/** What the debug queries `<a> attr`, `<c> category` and `<q> query` select. */
export type ProductFilter =
  { readonly attribute: string } | { readonly category: string } | { readonly query: string };

/**
 * The catalog's products as the store reads them: held in memory, or fetched on demand (e.g. from
 * Postgres, a results page at a time). Which asins exist, and in what order, is known at once.
 */
export interface StoreProducts {
  readonly count: number;
  has(asin: string): boolean;
  /** The asin at a catalog position (the order the catalog file listed them in). */
  asinAt(position: number): string;
  /** Entries for these asins, in the same order (undefined for an unknown asin), fetched together. */
  entries(asins: readonly string[]): Promise<ReadonlyArray<CatalogEntry | undefined>>;
  /** Asins of the products a debug query selects, in catalog order. */
  matching(filter: ProductFilter): Promise<readonly string[]>;
}

interface PurchaseToScore {
  readonly goalIndex: number;
  readonly entry: CatalogEntry;
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
  readonly products: StoreProducts;
  /** Goals in goal-index order (after the seed-233 shuffle): held in memory, or a source of them. */
  readonly goals: readonly StoreGoal[] | StoreGoals;
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
  readonly goals: StoreGoals;
  readonly random: () => number;
  private readonly products: StoreProducts;
  private readonly searchEngine: StoreSearch;
  private readonly scorer: ScorePurchase;
  private readonly searchCache: LruMap<string, readonly string[]>;
  private cumulativeWeights: number[] | null = null;

  constructor(config: StoreConfig) {
    this.products = config.products;
    this.goals = Array.isArray(config.goals)
      ? new InMemoryStoreGoals(config.goals)
      : (config.goals as StoreGoals);
    this.searchEngine = config.search;
    this.scorer = config.scorePurchase;
    this.random = config.random ?? Math.random;
    this.searchCache = new LruMap(config.searchCacheSize ?? 2048);
  }

  /** Whether the catalog has a product with exactly this asin. */
  has(asin: string): boolean {
    return this.products.has(asin);
  }

  async product(asin: string): Promise<StoreProduct | undefined> {
    if (!this.products.has(asin)) return undefined;
    const [entry] = await this.products.entries([asin]);
    return entry?.product;
  }

  /** The products of these asins, in order, fetched together (unknown asins are left out). */
  async productsOf(asins: readonly string[]): Promise<StoreProduct[]> {
    const entries = await this.products.entries(asins);
    return entries.flatMap((entry) => (entry === undefined ? [] : [entry.product]));
  }

  async hiddenPrice(asin: string): Promise<number | undefined> {
    const [entry] = await this.products.entries([asin]);
    return entry?.price;
  }

  /** A loaded goal (see `loadGoal`). */
  goal(index: number): StoreGoal {
    return this.goals.at(index);
  }

  /** Makes goal `index` readable by `goal` (at once for goals held in memory). */
  loadGoal(index: number): Promise<void> {
    return this.goals.load([index]);
  }

  /**
   * A goal index drawn by weight the way the original's `random_idx` does it: bisect a uniform draw
   * over `[0, w0, w0+w1, …]` and cap at the second-to-last boundary (which shifts picks by one goal).
   */
  sampleGoalIndex(): number {
    if (this.goals.count === 0) throw new RangeError('the store has no goals');
    if (this.cumulativeWeights === null) {
      const weights = this.goals.weights;
      if (weights === undefined)
        throw new Error(
          'this store fetches goals on demand and cannot draw one by weight: give a goal index',
        );
      const sums = [0];
      let total = 0;
      for (const weight of weights) sums.push((total += weight));
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
   * The asins a search for these keywords lists, best first: at most 50 from the search engine,
   * or for the debug queries `<r>`, `<a> attr`, `<c> category`, `<q> query` every match.
   */
  async searchAsins(keywords: readonly string[]): Promise<readonly string[]> {
    const [first, ...rest] = keywords;
    switch (first) {
      case '<r>':
        return this.randomAsins(SEARCH_RETURN_N);
      case '<a>':
        return this.products.matching({ attribute: pythonStrip(rest.join(' ')) });
      case '<c>':
        return this.products.matching({ category: pythonStrip(rest[0] ?? '') });
      case '<q>':
        return this.products.matching({ query: pythonStrip(rest.join(' ')) });
      default:
        return this.rankedAsins(keywords.join(' '));
    }
  }

  async scorePurchase(
    goalIndex: number,
    asin: string,
    options: SelectedOptions,
  ): Promise<PurchaseScore & { readonly price: number }> {
    const [[entry]] = await Promise.all([
      this.products.has(asin) ? this.products.entries([asin]) : [undefined],
      this.goals.load([goalIndex]),
    ]);
    if (entry === undefined) throw new RangeError(`no product or price for ASIN ${asin}`);
    return { ...this.scorer({ goalIndex, entry, options }), price: entry.price };
  }

  private rankedAsins(query: string): readonly string[] {
    const cached = this.searchCache.get(query);
    if (cached !== undefined) return cached;
    const ranked = this.searchEngine.search(query, SEARCH_RETURN_N);
    const hits =
      this.searchEngine.listsOnlyStoreProducts === true
        ? ranked
        : ranked.filter((asin) => this.products.has(asin));
    this.searchCache.set(query, hits);
    return hits;
  }

  /** A partial Fisher-Yates shuffle of the catalog order; moved positions are kept in a map, not a copy. */
  private randomAsins(count: number): string[] {
    const total = this.products.count;
    const take = Math.min(count, total);
    const moved = new Map<number, number>();
    const at = (position: number): number => moved.get(position) ?? position;
    const picked: string[] = [];
    for (let i = 0; i < take; i++) {
      const j = i + Math.floor(this.random() * (total - i));
      const chosen = at(j);
      moved.set(j, at(i));
      picked.push(this.products.asinAt(chosen));
    }
    return picked;
  }
}

/** The catalog's products held in memory (tests, the site, fixtures). */
export class InMemoryStoreProducts implements StoreProducts {
  private readonly byAsin: ReadonlyMap<string, CatalogEntry>;
  private readonly order: readonly CatalogEntry[];
  private asinsByAttribute: Map<string, Set<string>> | null = null;

  constructor(entries: readonly CatalogEntry[]) {
    this.order = entries;
    this.byAsin = new Map(entries.map((entry) => [entry.product.asin, entry]));
  }

  get count(): number {
    return this.order.length;
  }

  has(asin: string): boolean {
    return this.byAsin.has(asin);
  }

  asinAt(position: number): string {
    const entry = this.order[position];
    if (entry === undefined) throw new RangeError(`no product at position ${position}`);
    return entry.product.asin;
  }

  entries(asins: readonly string[]): Promise<ReadonlyArray<CatalogEntry | undefined>> {
    return Promise.resolve(asins.map((asin) => this.byAsin.get(asin)));
  }

  matching(filter: ProductFilter): Promise<readonly string[]> {
    let keep: (product: StoreProduct) => boolean;
    if ('attribute' in filter) {
      const asins = this.attributeIndex().get(filter.attribute);
      keep = (product) => asins?.has(product.asin) === true;
    } else if ('category' in filter) {
      keep = (product) => product.category === filter.category;
    } else {
      keep = (product) => product.query === filter.query;
    }
    return Promise.resolve(
      this.order.filter((entry) => keep(entry.product)).map((entry) => entry.product.asin),
    );
  }

  private attributeIndex(): Map<string, Set<string>> {
    if (this.asinsByAttribute === null) {
      const index = new Map<string, Set<string>>();
      for (const { product } of this.order) {
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
