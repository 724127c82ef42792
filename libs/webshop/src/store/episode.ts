import { richTextFromNodes, simpleTextFromNodes } from './html-to-text.js';
import { textEnvironmentLinks, type SelectedOptions, type SubPageName } from './page-links.js';
import { renderPageHtml, type PageView } from './page-templates.js';
import { pageTextNodes } from './page-text.js';
import { pythonDictRepr, pythonJsonDumpsDict } from './python-text-formats.js';
import type { Store, StoreGoal } from './store.js';
import type { StoreProduct } from './store-product.js';

export type ObservationMode = 'html' | 'text' | 'text_rich' | 'url';

export interface EpisodeOptions {
  /** Default 'text'. */
  readonly observationMode?: ObservationMode;
  /** Offer the Attributes sub-page (the original's `show_attrs`). Default false. */
  readonly showAttributes?: boolean;
  /** Earlier observations / actions prepended to each step's observation (`num_prev_obs`, `num_prev_actions`). */
  readonly previousObservations?: number;
  readonly previousActions?: number;
  /** Base of the page URLs in 'url' mode and in 'text_rich' option highlighting. */
  readonly baseUrl?: string;
}

export interface AvailableActions {
  readonly hasSearchBar: boolean;
  /** Lowercased clickable texts, as `click[...]` accepts them. */
  readonly clickables: readonly string[];
}

export interface PurchaseInfo {
  readonly asin: string;
  /** Selected options in selection order. */
  readonly options: Readonly<Record<string, string>>;
  /** The hidden price the reward used. */
  readonly price: number;
  /** The original's verbose reward info. */
  readonly rewardInfo: Readonly<Record<string, unknown>>;
}

export interface StepResult {
  readonly observation: string;
  readonly reward: number;
  readonly done: boolean;
  /** The original returns no info; here a purchase reports what was bought and the reward details. */
  readonly info: PurchaseInfo | null;
  /** False when the action was refused; the original then returns the int `0` instead of `0.0`. */
  readonly actionValid: boolean;
}

const ACTION_PATTERN = /^([^\n]+)\[([^\n]+)\]/;

/** The original's `parse_action`: `name[arg]` matched greedily at the start only. */
export function parseAction(action: string): {
  readonly name: string;
  readonly argument: string | null;
} {
  const match = ACTION_PATTERN.exec(action);
  if (match === null) return { name: action, argument: null };
  return { name: match[1] ?? '', argument: match[2] ?? '' };
}

const SUB_PAGE_BY_CLICK: ReadonlyMap<string, SubPageName> = new Map([
  ['description', 'Description'],
  ['features', 'Features'],
  ['reviews', 'Reviews'],
  ['attributes', 'Attributes'],
]);

type CurrentPage =
  | { readonly kind: 'search' }
  /** `hits`: every listed asin; `shown`: the products of the current results page. */
  | {
      readonly kind: 'results';
      readonly hits: readonly string[];
      readonly shown: readonly StoreProduct[];
    }
  | { readonly kind: 'item' }
  | { readonly kind: 'sub'; readonly subPage: SubPageName }
  | { readonly kind: 'done'; readonly reward: number; readonly options: SelectedOptions };

const PRODUCTS_PER_PAGE = 10;

/**
 * One agent's session in the store: the original's text environment (`WebAgentTextEnv` with its
 * `SimServer` session) reduced to the state that decides the next page. Pages are re-rendered
 * from that state on demand, so an idle episode costs a few small objects.
 */
export class Episode {
  private readonly mode: ObservationMode;
  private readonly showAttributes: boolean;
  private readonly previousObservations: number;
  private readonly previousActions: number;
  private readonly baseUrl: string;

  private goalIndex = -1;
  /** The goal of this episode, held from reset (a store fetching goals on demand may drop it from its cache). */
  private goal: StoreGoal | undefined;
  private sessionId = '';
  private page: CurrentPage = { kind: 'search' };
  private keywords: readonly string[] = [];
  private pageNumber = 1;
  private asin: string | null = null;
  /** The product of `asin`, fetched when its item page was opened. */
  private product: StoreProduct | undefined = undefined;
  private options = new Map<string, string>();
  private visitedAsins: Set<string> | null = null;
  private purchased = false;
  private observationHistory: string[] = [];
  private actionHistory: string[] = [];

  constructor(
    private readonly store: Store,
    options: EpisodeOptions = {},
  ) {
    this.mode = options.observationMode ?? 'text';
    this.showAttributes = options.showAttributes ?? false;
    this.previousObservations = options.previousObservations ?? 0;
    this.previousActions = options.previousActions ?? 0;
    this.baseUrl = options.baseUrl ?? 'http://127.0.0.1:3000';
  }

  /**
   * Starts over on the search page with goal `goalIndex` (drawn by weight when omitted).
   * `sessionId` only shows in URLs and HTML; it defaults to the goal index, as `reset(session=i)` does.
   */
  reset(
    goalIndex?: number,
    sessionId?: string,
  ): { readonly observation: string; readonly info: null } {
    const index = goalIndex ?? this.store.sampleGoalIndex();
    this.goal = this.store.goal(index);
    this.goalIndex = index;
    this.sessionId = sessionId ?? String(index);
    this.goToSearchPage();
    this.purchased = false;
    const observation = this.observation;
    this.observationHistory = this.previousObservations > 0 ? [observation] : [];
    this.actionHistory = [];
    return { observation, info: null };
  }

  private get currentGoal(): StoreGoal {
    if (this.goal === undefined) throw new Error('call reset() before using the episode');
    return this.goal;
  }

  get currentGoalIndex(): number {
    return this.goalIndex;
  }

  /** The goal's instruction with its `Instruction: ` prefix, as `env.instruction_text` reports it. */
  get instructionText(): string {
    return `Instruction: ${this.currentGoal.instructionText}`;
  }

  /** True once Buy Now was clicked in this episode (the original keeps accepting actions after it). */
  get purchaseMade(): boolean {
    return this.purchased;
  }

  /** Applies one action; asynchronous because products may be fetched on demand. */
  async step(action: string): Promise<StepResult> {
    this.assertStarted();
    const clickables = this.clickableSet();
    const { name, argument } = parseAction(action);
    const target = argument?.toLowerCase() ?? null;
    let reward = 0;
    let done = false;
    let info: PurchaseInfo | null = null;
    let actionValid = true;
    if (name === 'search' && target !== null && target !== '') {
      await this.showResults(target.split(' '), 1);
    } else if (
      name === 'click' &&
      target !== null &&
      target !== 'search' &&
      clickables.has(target)
    ) {
      const purchase = await this.click(target);
      if (purchase !== null) {
        done = true;
        reward = purchase.reward;
        info = purchase.info;
      }
    } else {
      actionValid = false;
    }
    return { observation: this.stateWithHistory(action), reward, done, info, actionValid };
  }

  availableActions(): AvailableActions {
    this.assertStarted();
    return { hasSearchBar: this.page.kind === 'search', clickables: [...this.clickableSet()] };
  }

  /** The current page in the configured observation mode. */
  get observation(): string {
    this.assertStarted();
    switch (this.mode) {
      case 'url':
        return this.url;
      case 'html':
        return this.html;
      // Straight from the page's view: the same nodes as parsing its HTML (page-text.ts), at a fraction of the cost.
      case 'text':
        return simpleTextFromNodes(pageTextNodes(this.pageView()));
      case 'text_rich':
        return richTextFromNodes(pageTextNodes(this.pageView()), {
          url: this.url,
          visitedAsins: this.visitedAsins ?? new Set(),
        });
    }
  }

  /** The page as the text environment renders it (the 'html' observation). */
  get html(): string {
    this.assertStarted();
    return renderPageHtml(this.pageView(), textEnvironmentLinks);
  }

  /** The page URL as the text environment tracks it (`/search_results/{session}/{kw+kw}/{page}`, …). */
  get url(): string {
    const base = this.baseUrl;
    const keywordPath = this.keywords.join('+');
    switch (this.page.kind) {
      case 'search':
        return `${base}/${this.sessionId}`;
      case 'results':
        return `${base}/search_results/${this.sessionId}/${keywordPath}/${this.pageNumber}`;
      case 'item':
        return `${base}/item_page/${this.sessionId}/${this.asin}/${keywordPath}/${this.pageNumber}/${pythonJsonDumpsDict(this.options, { sortKeys: false })}`;
      case 'sub':
        return `${base}/item_sub_page/${this.sessionId}/${this.asin}/${keywordPath}/${this.pageNumber}/${this.page.subPage}/${pythonDictRepr(this.options)}`;
      case 'done':
        return `${base}/done/${this.sessionId}/${this.asin}/${pythonDictRepr(this.page.options)}`;
    }
  }

  private assertStarted(): void {
    if (this.goalIndex < 0) throw new Error('call reset() before using the episode');
  }

  private async click(
    target: string,
  ): Promise<{ readonly reward: number; readonly info: PurchaseInfo } | null> {
    const page = this.page;
    if (target === 'buy now') return this.purchase();
    if (target === 'back to search') this.goToSearchPage();
    else if (target === 'next >' && page.kind === 'results')
      await this.showResults(this.keywords, this.pageNumber + 1);
    else if (target === '< prev' && page.kind === 'results')
      await this.showResults(this.keywords, this.pageNumber - 1);
    else if (target === '< prev' && page.kind === 'sub') this.page = { kind: 'item' };
    else if (target === '< prev' && page.kind === 'item')
      await this.showResults(this.keywords, this.pageNumber);
    else {
      const subPage = SUB_PAGE_BY_CLICK.get(target);
      if (subPage !== undefined) this.page = { kind: 'sub', subPage };
      else await this.clickProductOrOption(target, page);
    }
    return null;
  }

  private async clickProductOrOption(target: string, page: CurrentPage): Promise<void> {
    if (page.kind === 'results') {
      const listed = page.hits.find((hit) => hit.toLowerCase() === target);
      const asin = target.toUpperCase();
      this.asin = this.store.has(asin) ? asin : (listed ?? asin);
      (this.visitedAsins ??= new Set()).add(asin);
      this.product = await this.store.product(this.asin);
    } else {
      const group = this.optionGroupsByValue().get(target);
      if (group !== undefined) this.options.set(group.toLowerCase(), target);
    }
    this.page = { kind: 'item' };
  }

  private async purchase(): Promise<{ readonly reward: number; readonly info: PurchaseInfo }> {
    const asin = this.asin;
    if (asin === null) throw new Error('Buy Now without a product');
    const score = await this.store.scorePurchase(this.goalIndex, asin, this.options);
    const options = new Map(this.options);
    this.page = { kind: 'done', reward: score.reward, options };
    this.purchased = true;
    return {
      reward: score.reward,
      info: {
        asin,
        options: Object.fromEntries(options),
        price: score.price,
        rewardInfo: score.info,
      },
    };
  }

  private goToSearchPage(): void {
    this.page = { kind: 'search' };
    this.keywords = [];
    this.pageNumber = 1;
    this.asin = null;
    this.product = undefined;
    this.options = new Map();
    this.visitedAsins = null;
  }

  private async showResults(keywords: readonly string[], pageNumber: number): Promise<void> {
    const hits = await this.store.searchAsins(keywords);
    const shown = await this.store.productsOf(this.pageSlice(hits, pageNumber));
    this.keywords = keywords;
    this.pageNumber = pageNumber;
    this.asin = null;
    this.product = undefined;
    this.options = new Map();
    this.page = { kind: 'results', hits, shown };
  }

  private currentProduct(): StoreProduct {
    const product = this.asin === null ? undefined : this.product;
    if (product === undefined) throw new Error(`no product for ASIN ${this.asin}`);
    return product;
  }

  /** Option value → the group whose radio button carries it; a later group wins a shared value. */
  private optionGroupsByValue(): Map<string, string> {
    const groups = new Map<string, string>();
    for (const option of this.currentProduct().options) {
      for (const value of option.values) groups.set(value, option.name);
    }
    return groups;
  }

  private clickableSet(): Set<string> {
    const page = this.page;
    switch (page.kind) {
      case 'search':
        return new Set(['search']);
      case 'results': {
        const keys = new Set(['back to search']);
        if (this.pageNumber > 1) keys.add('< prev');
        keys.add('next >');
        for (const asin of this.pageSlice(page.hits, this.pageNumber)) keys.add(asin.toLowerCase());
        return keys;
      }
      case 'item': {
        const keys = new Set(['back to search', '< prev', 'description', 'features', 'reviews']);
        if (this.showAttributes) keys.add('attributes');
        keys.add('buy now');
        for (const value of this.optionGroupsByValue().keys()) keys.add(value);
        return keys;
      }
      case 'sub':
        return new Set(['back to search', '< prev']);
      case 'done':
        return new Set();
    }
  }

  private pageSlice(hits: readonly string[], pageNumber: number): readonly string[] {
    const start = (pageNumber - 1) * PRODUCTS_PER_PAGE;
    return start < 0 ? [] : hits.slice(start, start + PRODUCTS_PER_PAGE);
  }

  private pageView(): PageView {
    const base = { sessionId: this.sessionId, instructionText: this.currentGoal.instructionText };
    const page = this.page;
    switch (page.kind) {
      case 'search':
        return { kind: 'search', ...base };
      case 'results':
        return {
          kind: 'results',
          ...base,
          keywords: this.keywords,
          page: this.pageNumber,
          total: page.hits.length,
          products: page.shown,
        };
      case 'item':
        return {
          kind: 'item',
          ...base,
          keywords: this.keywords,
          page: this.pageNumber,
          product: this.currentProduct(),
          options: this.options,
          showAttributes: this.showAttributes,
        };
      case 'sub':
        return {
          kind: 'sub',
          ...base,
          keywords: this.keywords,
          page: this.pageNumber,
          product: this.currentProduct(),
          options: this.options,
          subPage: page.subPage,
        };
      case 'done':
        return {
          kind: 'done',
          sessionId: this.sessionId,
          asin: this.currentProduct().asin,
          options: page.options,
          reward: page.reward,
          details: null,
        };
    }
  }

  /** The step's observation with the configured history, oldest first, joined by ' [SEP] '. */
  private stateWithHistory(action: string): string {
    const observation = this.observation;
    const depth = Math.max(this.previousObservations, this.previousActions);
    if (depth === 0) return observation;
    this.actionHistory.push(action);
    const parts = [observation];
    for (let i = 1; i <= depth; i++) {
      const previousAction = this.actionHistory[this.actionHistory.length - i];
      if (previousAction !== undefined && this.previousActions >= i) parts.push(previousAction);
      const previousObservation = this.observationHistory[this.observationHistory.length - i];
      if (previousObservation !== undefined && this.previousObservations >= i)
        parts.push(previousObservation);
    }
    this.observationHistory.push(observation);
    if (this.observationHistory.length > this.previousObservations) this.observationHistory.shift();
    if (this.actionHistory.length > this.previousActions) this.actionHistory.shift();
    return parts.reverse().join(' [SEP] ');
  }
}
