import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { webshopGoalSchema, webshopProductSchema } from '../catalog/index.js';
import { tableNounExtractor } from '../reward/index.js';
import { createCatalogStore } from './catalog-store.js';
import { Episode, parseAction, type ObservationMode } from './episode.js';
import { createStore, InMemoryStoreProducts, type Store } from './store.js';
import type { CatalogStoreProduct, StoreProduct } from './store-product.js';

const fixtureUrl = new URL(
  '../../../../../shared/webshop/fixtures/env_episodes.json',
  import.meta.url,
);
const fixtureText = readFileSync(fixtureUrl, 'utf8');

const stepSchema = z.object({
  action: z.string().nullable(),
  observation: z.string(),
  url: z.string(),
  available_actions: z.object({ has_search_bar: z.boolean(), clickables: z.array(z.string()) }),
  reward: z.number(),
  done: z.boolean(),
  search_engine_call: z.object({ query: z.string(), asins: z.array(z.string()) }).optional(),
});
const partSchema = z.object({
  products: z.array(webshopProductSchema),
  product_prices: z.record(z.string(), z.number()),
  goals: z.array(webshopGoalSchema),
  episodes: z.array(
    z.object({
      name: z.string(),
      goal_index: z.number(),
      observation_mode: z.enum(['html', 'text', 'text_rich', 'url']),
      steps: z.array(stepSchema),
    }),
  ),
});
const fixture = z
  .object({
    human: partSchema,
    synthetic: partSchema,
    standin_title_nouns: z.record(z.string(), z.array(z.string())),
  })
  .parse(JSON.parse(fixtureText));
type Part = z.infer<typeof partSchema>;

function fixtureStore(part: Part): Store {
  const answers = new Map<string, string[]>();
  for (const episode of part.episodes) {
    for (const step of episode.steps) {
      if (step.search_engine_call)
        answers.set(step.search_engine_call.query, step.search_engine_call.asins);
    }
  }
  return createCatalogStore(
    {
      products: part.products,
      productPrices: new Map(Object.entries(part.product_prices)),
      goals: part.goals,
    },
    {
      search: { search: (query, limit) => (answers.get(query) ?? []).slice(0, limit) },
      nounExtractor: tableNounExtractor(fixture.standin_title_nouns),
    },
  );
}

const humanStore = fixtureStore(fixture.human);
const syntheticStore = fixtureStore(fixture.synthetic);

// JSON.parse cannot tell the original's int reward 0 (refused action) from 0.0; the raw text can.
const rawRewards = [...fixtureText.matchAll(/"reward": (-?[0-9.eE+-]+)/g)].map(
  (match) => match[1] ?? '',
);

function sessionOf(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

describe('Episode replays the original episodes', () => {
  const episodes = [
    ...fixture.human.episodes.map((episode) => ({ part: 'human', store: humanStore, episode })),
    ...fixture.synthetic.episodes.map((episode) => ({
      part: 'synthetic',
      store: syntheticStore,
      episode,
    })),
  ];
  let rewardToken = 0;
  const rewardTokens = episodes.map(({ episode }) => {
    const tokens = rawRewards.slice(rewardToken, rewardToken + episode.steps.length);
    rewardToken += episode.steps.length;
    return tokens;
  });

  it('has one raw reward per recorded step', async () => {
    expect(rawRewards).toHaveLength(rewardToken);
  });

  episodes.forEach(({ part, store, episode }, episodeIndex) => {
    it(`${part} ${episode.name} (${episode.observation_mode})`, async () => {
      const [first, ...rest] = episode.steps;
      if (first === undefined) throw new Error('empty episode');
      const sut = new Episode(store, {
        observationMode: episode.observation_mode satisfies ObservationMode,
      });
      expect(sut.reset(episode.goal_index, sessionOf(first.url)).observation).toBe(
        first.observation,
      );
      expect(sut.url).toBe(first.url);
      for (const [index, step] of rest.entries()) {
        const result = await sut.step(step.action ?? '');
        const where = `step ${index + 1} ${step.action}`;
        expect(result.observation, where).toBe(step.observation);
        expect(sut.url, where).toBe(step.url);
        const actions = sut.availableActions();
        expect(
          { has_search_bar: actions.hasSearchBar, clickables: actions.clickables },
          where,
        ).toEqual(step.available_actions);
        expect(result.reward, where).toBe(step.reward);
        expect(result.done, where).toBe(step.done);
        const rawReward = rewardTokens[episodeIndex]?.[index + 1];
        expect(result.actionValid, `${where}: raw reward ${rawReward}`).toBe(rawReward !== '0');
      }
    });
  });
});

describe('parseAction', () => {
  it.each([
    ['search[a] b', { name: 'search', argument: 'a' }],
    ['click[a[b]]', { name: 'click[a', argument: 'b]' }],
    ['search[]', { name: 'search[]', argument: null }],
    ['search[ ]', { name: 'search', argument: ' ' }],
    ['click[x\n]', { name: 'click[x\n]', argument: null }],
    ['Search[x]', { name: 'Search', argument: 'x' }],
  ])('%j', (action, expected) => {
    expect(parseAction(action)).toEqual(expected);
  });
});

describe('Episode semantics', () => {
  it('refuses unknown clicks, click[search] and wrong-case action names without changing the page', async () => {
    const sut = new Episode(humanStore);
    const start = sut.reset(0).observation;
    for (const action of ['click[search]', 'Search[deodorant]', 'think[hmm]', 'click[buy now]']) {
      const result = await sut.step(action);
      expect(result).toEqual({
        observation: start,
        reward: 0,
        done: false,
        info: null,
        actionValid: false,
      });
    }
  });

  it('searches from every page, including after a purchase, and keeps accepting actions after done', async () => {
    const sut = new Episode(humanStore);
    sut.reset(1);
    await sut.step('search[bright citrus deodorant sensitive skin]');
    await sut.step('click[b0test0001]');
    expect((await sut.step('search[deodorant]')).observation).toContain(
      'Page 1 (Total results: 16)',
    );
    await sut.step('click[b0test0001]');
    const bought = await sut.step('click[buy now]');
    expect(bought.done).toBe(true);
    expect(bought.info?.asin).toBe('B0TEST0001');
    expect(sut.purchaseMade).toBe(true);
    expect(sut.availableActions()).toEqual({ hasSearchBar: false, clickables: [] });
    const after = await sut.step('search[deodorant]');
    expect(after).toMatchObject({ reward: 0, done: false, actionValid: true });
    expect(sut.availableActions().clickables).toContain('b0test0001');
  });

  it('offers and shows the Attributes sub-page when asked to', async () => {
    const sut = new Episode(humanStore, { showAttributes: true });
    sut.reset(1);
    await sut.step('search[deodorant]');
    await sut.step('click[b0test0001]');
    expect(sut.availableActions().clickables.slice(0, 7)).toEqual([
      'back to search',
      '< prev',
      'description',
      'features',
      'reviews',
      'attributes',
      'buy now',
    ]);
    expect(sut.observation).toContain('[SEP] Reviews [SEP] Attributes [SEP] Buy Now');
    const result = await sut.step('click[attributes]');
    expect(result.observation).toMatch(
      / \[SEP\] < Prev \[SEP\] sensitive skin \[SEP\] aluminum free \[SEP\] long lasting \[SEP\] beauty \[SEP\] deodorant \[SEP\] Beauty & Personal Care › /,
    );
    expect(sut.url).toContain('/Attributes/{}');
  });

  it('marks visited products as clicked in text_rich until Back to Search', async () => {
    const sut = new Episode(humanStore, { observationMode: 'text_rich' });
    sut.reset(1);
    await sut.step('search[deodorant]');
    await sut.step('click[b0test0002]');
    const results = (await sut.step('click[< prev]')).observation;
    expect(results).toContain('\n[clicked button] B0TEST0002 [clicked button_]\n');
    expect(results).toContain('\n[button] B0TEST0001 [button_]\n');
    await sut.step('click[back to search]');
    expect((await sut.step('search[deodorant]')).observation).toContain(
      '\n[button] B0TEST0002 [button_]\n',
    );
  });

  it('prepends earlier actions and observations when configured', async () => {
    const sut = new Episode(humanStore, { previousObservations: 1, previousActions: 1 });
    const first = sut.reset(1).observation;
    const second = await sut.step('search[deodorant]');
    const results = sut.observation;
    expect(second.observation).toBe(`${first} [SEP] search[deodorant] [SEP] ${results}`);
    const third = await sut.step('click[nothing]');
    expect(third.observation).toBe(`${results} [SEP] click[nothing] [SEP] ${results}`);
  });

  it('draws goals by weight like the original random_idx (shifted by one)', async () => {
    const store = createStore({
      products: new InMemoryStoreProducts([]),
      goals: [1, 1, 1].map((weight, index) => ({ instructionText: `goal ${index}`, weight })),
      search: { search: () => [] },
      scorePurchase: () => ({ reward: 0, info: {} }),
      random: () => 0,
    });
    const sut = new Episode(store);
    sut.reset();
    expect(sut.currentGoalIndex).toBe(1);
    expect(sut.instructionText).toBe('Instruction: goal 1');
  });
});

describe('Episode with hand-made products', () => {
  const product = (asin: string, overrides: Partial<StoreProduct> = {}): StoreProduct => ({
    asin,
    title: `Product ${asin}`,
    description: null,
    bulletPoints: [],
    priceText: '$1.0',
    options: [],
    optionImages: new Map(),
    attributes: ['soft'],
    mainImage: null,
    category: 'beauty',
    query: 'soap',
    productCategory: 'A › B',
    ...overrides,
  });
  const products = [
    product('B000000001', {
      options: [
        { name: 'color', values: ['black', 'one size'] },
        { name: 'size', values: ['one size', 'large'] },
      ],
    }),
    product('B000000002', { category: 'garden', query: 'rake' }),
  ];
  const purchases: unknown[] = [];
  const prices = new Map([
    ['B000000001', 5],
    ['B000000002', 7],
  ]);
  // The scorer below never reads the reward record, so these products have none.
  const entries = products.map((p) => ({
    product: p,
    record: {} as CatalogStoreProduct,
    price: prices.get(p.asin) ?? 0,
  }));
  const store = createStore({
    products: new InMemoryStoreProducts(entries),
    goals: [{ instructionText: 'buy soap', weight: 1 }],
    search: { search: () => ['B000000002', 'UNKNOWN', 'B000000001'] },
    scorePurchase: (purchase) => {
      purchases.push({
        goalIndex: purchase.goalIndex,
        asin: purchase.entry.product.asin,
        price: purchase.entry.price,
        options: [...purchase.options],
      });
      return { reward: 0.5, info: { r_type: 1 } };
    },
  });

  it('drops unknown ASINs from search results and deduplicates option clickables', async () => {
    const sut = new Episode(store);
    sut.reset(0);
    expect((await sut.step('search[soap]')).observation).toContain('Page 1 (Total results: 2)');
    await sut.step('click[b000000001]');
    expect(sut.availableActions().clickables.slice(6)).toEqual(['black', 'one size', 'large']);
    expect(sut.observation).toContain('Description [SEP] Features [SEP] Reviews [SEP] Buy Now');
  });

  it('gives a value shared by two option groups to the later group, and replaces earlier choices', async () => {
    const sut = new Episode(store, { observationMode: 'url' });
    sut.reset(0);
    await sut.step('search[soap]');
    await sut.step('click[b000000001]');
    await sut.step('click[black]');
    await sut.step('click[one size]');
    expect(sut.observation).toBe(
      'http://127.0.0.1:3000/item_page/0/B000000001/soap/1/{"color": "black", "size": "one size"}',
    );
    await sut.step('click[large]');
    const bought = await sut.step('click[buy now]');
    expect(bought.reward).toBe(0.5);
    expect(bought.info).toEqual({
      asin: 'B000000001',
      options: { color: 'black', size: 'large' },
      price: 5,
      rewardInfo: { r_type: 1 },
    });
    expect(purchases.at(-1)).toMatchObject({
      goalIndex: 0,
      asin: 'B000000001',
      price: 5,
      options: [
        ['color', 'black'],
        ['size', 'large'],
      ],
    });
    expect(sut.observation).toBe(
      "http://127.0.0.1:3000/done/0/B000000001/{'color': 'black', 'size': 'large'}",
    );
  });

  it('answers the debug queries <c> and <q> from the catalog', async () => {
    const sut = new Episode(store);
    sut.reset(0);
    expect((await sut.step('search[<c> garden]')).observation).toContain(
      '(Total results: 1) [SEP] Next > [SEP] B000000002',
    );
    expect((await sut.step('search[<q> soap]')).observation).toContain(
      '(Total results: 1) [SEP] Next > [SEP] B000000001',
    );
    expect((await sut.step('search[<r>]')).observation).toContain('(Total results: 2)');
  });

  it('renders None for missing descriptions, as Jinja does', async () => {
    const sut = new Episode(store);
    sut.reset(0);
    await sut.step('search[soap]');
    await sut.step('click[b000000002]');
    expect((await sut.step('click[description]')).observation).toMatch(/< Prev \[SEP\] None$/);
  });
});
