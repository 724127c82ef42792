// Fixture runners for the store: env_episodes.json (whole episodes replayed step by step) and
// html_mock_text_observations.json (text observations of real WebShop pages). They join the
// reward module's runner registry; each recognises its file by structure, never by name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { webshopGoalSchema, webshopProductSchema } from '../catalog/index.js';
import {
  checkCase,
  checkCaseAsync,
  defaultNounExtractor,
  expectSameJson,
  tableNounExtractor,
  type FixtureCaseResult,
  type FixtureRunContext,
  type FixtureRunner,
} from '../reward/index.js';
import {
  createCatalogStore,
  type CatalogStoreOptions,
  type StoreCatalog,
} from './catalog-store.js';
import { Episode, type ObservationMode } from './episode.js';
import { simpleTextFromNodes, visibleTextNodes } from './html-to-text.js';
import type { Store, StoreSearch } from './store.js';

const stepSchema = z.object({
  action: z.string().nullable(),
  observation: z.string(),
  url: z.string().optional(),
  available_actions: z.object({ has_search_bar: z.boolean(), clickables: z.array(z.string()) }),
  reward: z.number(),
  done: z.boolean(),
  search_engine_call: z.object({ query: z.string(), asins: z.array(z.string()) }).optional(),
  verbose_info: z.record(z.string(), z.unknown()).optional(),
  purchased: z
    .object({ asin: z.string(), options: z.record(z.string(), z.string()), price: z.number() })
    .optional(),
});

const episodeSchema = z.object({
  name: z.string(),
  goal_index: z.number().int().nonnegative(),
  instruction_text: z.string().optional(),
  observation_mode: z.enum(['html', 'text', 'text_rich', 'url']),
  show_attrs: z.boolean().optional(),
  steps: z.array(stepSchema).min(1),
});

const episodePartSchema = z.object({
  products: z.array(webshopProductSchema),
  product_prices: z.record(z.string(), z.number()),
  goals: z.array(webshopGoalSchema),
  episodes: z.array(episodeSchema),
});

const envEpisodesSchema = z.object({
  standin_title_nouns: z.record(z.string(), z.array(z.string())).optional(),
  human: episodePartSchema.optional(),
  synthetic: episodePartSchema.optional(),
});

type EpisodePart = z.infer<typeof episodePartSchema>;

/**
 * Builds the store an env_episodes part is replayed on, from the part's catalog and the recorded
 * search; the default holds it in memory. Other stores (products in Postgres) replay the same episodes.
 */
export type FixtureStoreFactory = (
  partName: 'human' | 'synthetic',
  catalog: StoreCatalog,
  options: CatalogStoreOptions & { readonly search: StoreSearch },
) => Store | Promise<Store>;

const inMemoryFixtureStore: FixtureStoreFactory = (_partName, catalog, options) =>
  createCatalogStore(catalog, options);
type FixtureEpisode = z.infer<typeof episodeSchema>;
type FixtureStep = z.infer<typeof stepSchema>;

/** A search that answers each query with the ASIN list the original recorded for it, and logs the calls. */
class RecordedSearch implements StoreSearch {
  readonly calls: string[] = [];
  constructor(private readonly answers: ReadonlyMap<string, readonly string[]>) {}

  search(query: string, limit: number): readonly string[] {
    this.calls.push(query);
    const asins = this.answers.get(query);
    if (asins === undefined)
      throw new Error(`no recorded search results for query ${JSON.stringify(query)}`);
    return asins.slice(0, limit);
  }
}

function recordedAnswers(part: EpisodePart): Map<string, readonly string[]> {
  const answers = new Map<string, readonly string[]>();
  for (const episode of part.episodes) {
    for (const step of episode.steps) {
      if (step.search_engine_call !== undefined)
        answers.set(step.search_engine_call.query, step.search_engine_call.asins);
    }
  }
  return answers;
}

const BASE_URL_AND_SESSION = /^(https?:\/\/[^/]+)\/([^/]+)$/;

async function replayEpisode(
  partName: 'human' | 'synthetic',
  part: EpisodePart,
  episode: FixtureEpisode,
  titleNouns: Readonly<Record<string, readonly string[]>> | undefined,
  storeFactory: FixtureStoreFactory,
): Promise<FixtureCaseResult[]> {
  const caseName = `${partName}/${episode.name}`;
  const search = new RecordedSearch(recordedAnswers(part));
  const store = await storeFactory(
    partName,
    {
      products: part.products,
      productPrices: new Map(Object.entries(part.product_prices)),
      goals: part.goals,
    },
    {
      search,
      searchCacheSize: 0,
      nounExtractor:
        titleNouns === undefined ? defaultNounExtractor() : tableNounExtractor(titleNouns),
    },
  );
  const [first, ...rest] = episode.steps;
  const start = BASE_URL_AND_SESSION.exec(first?.url ?? '');
  const sut = new Episode(store, {
    observationMode: episode.observation_mode satisfies ObservationMode,
    // Recorded episodes do not name the flag; an item page offering 'attributes' shows it was on.
    showAttributes:
      episode.show_attrs ??
      episode.steps.some((step) => step.available_actions.clickables.includes('attributes')),
    baseUrl: start?.[1],
  });
  const results: FixtureCaseResult[] = [];
  if (episode.goal_index !== undefined) await store.loadGoal(episode.goal_index);
  const reset = checkCase(`${caseName}/reset`, () => {
    const { observation } = sut.reset(episode.goal_index, start?.[2]);
    const expected = first === undefined ? null : expectedStep(first);
    return expectSameJson(
      `${caseName}/reset`,
      { ...observedStep(sut, observation, 0, false, null), searches: [] },
      { ...expected, searches: [] },
    );
  });
  results.push(reset);
  if (episode.instruction_text !== undefined) {
    results.push(
      expectSameJson(`${caseName}/instruction_text`, sut.instructionText, episode.instruction_text),
    );
  }
  if (!reset.passed) return results;
  for (const [index, step] of rest.entries()) {
    const stepCase = `${caseName}/step ${index + 1} ${JSON.stringify(step.action)}`;
    const result = await checkCaseAsync(stepCase, async () => {
      search.calls.length = 0;
      const outcome = await sut.step(step.action ?? '');
      const actual = {
        ...observedStep(sut, outcome.observation, outcome.reward, outcome.done, outcome.info),
        searches: [...search.calls],
      };
      return expectSameJson(stepCase, actual, {
        ...expectedStep(step),
        searches: step.search_engine_call === undefined ? [] : [step.search_engine_call.query],
      });
    });
    results.push(result);
    if (!result.passed) break;
  }
  return results;
}

function observedStep(
  sut: Episode,
  observation: string,
  reward: number,
  done: boolean,
  purchase: {
    asin: string;
    options: Readonly<Record<string, string>>;
    price: number;
    rewardInfo: unknown;
  } | null,
): Record<string, unknown> {
  const actions = sut.availableActions();
  return {
    observation,
    url: sut.url,
    available_actions: { has_search_bar: actions.hasSearchBar, clickables: actions.clickables },
    reward,
    done,
    ...(purchase === null
      ? {}
      : {
          verbose_info: purchase.rewardInfo,
          purchased: { asin: purchase.asin, options: purchase.options, price: purchase.price },
        }),
  };
}

function expectedStep(step: FixtureStep): Record<string, unknown> {
  return {
    observation: step.observation,
    url: step.url,
    available_actions: step.available_actions,
    reward: step.reward,
    done: step.done,
    ...(step.verbose_info === undefined ? {} : { verbose_info: step.verbose_info }),
    ...(step.purchased === undefined ? {} : { purchased: step.purchased }),
  };
}

/** Replays every episode of an env_episodes.json fixture on stores made by `storeFactory`. */
export async function replayEnvEpisodes(
  json: unknown,
  storeFactory: FixtureStoreFactory = inMemoryFixtureStore,
): Promise<FixtureCaseResult[]> {
  const fixture = envEpisodesSchema.parse(json);
  const results: FixtureCaseResult[] = [];
  for (const [partName, part] of [
    ['human', fixture.human],
    ['synthetic', fixture.synthetic],
  ] as const) {
    if (part === undefined) continue;
    for (const episode of part.episodes) {
      results.push(
        ...(await replayEpisode(
          partName,
          part,
          episode,
          fixture.standin_title_nouns,
          storeFactory,
        )),
      );
    }
  }
  return results;
}

/** env_episodes.json: every step's observation, URL, available actions, reward, done flag and search call. */
const envEpisodeStepsFixtureRunner: FixtureRunner = {
  name: 'webshop store episodes',
  matches: (json) => {
    const parsed = envEpisodesSchema.safeParse(json);
    return (
      parsed.success &&
      (parsed.data.human?.episodes.length ?? 0) + (parsed.data.synthetic?.episodes.length ?? 0) > 0
    );
  },
  run: (json) => replayEnvEpisodes(json),
};

const htmlMockObservationsSchema = z.object({
  text_observations: z.record(z.string(), z.string()),
});

function readMockPage(context: FixtureRunContext, fileName: string): string {
  const candidates = [
    join(context.fixtureDir, '..', 'html_mocks', fileName),
    join(context.fixtureDir, 'html_mocks', fileName),
    join(context.fixtureDir, fileName),
  ];
  for (const candidate of candidates) {
    try {
      return readFileSync(candidate, 'utf8');
    } catch {
      // try the next place the page may live
    }
  }
  throw new Error(`cannot find ${fileName} (looked in ${candidates.join(', ')})`);
}

/** html_mock_text_observations.json: the 'text' observation of each real page in html_mocks/. */
const htmlMockTextObservationsFixtureRunner: FixtureRunner = {
  name: 'webshop store html text observations',
  matches: (json) => htmlMockObservationsSchema.safeParse(json).success,
  run: (json, context) =>
    Object.entries(htmlMockObservationsSchema.parse(json).text_observations).map(
      ([fileName, expected]) =>
        checkCase(fileName, () =>
          expectSameJson(
            fileName,
            simpleTextFromNodes(visibleTextNodes(readMockPage(context, fileName))),
            expected,
          ),
        ),
    ),
};

export const storeFixtureRunners: readonly FixtureRunner[] = [
  envEpisodeStepsFixtureRunner,
  htmlMockTextObservationsFixtureRunner,
];

/** Runs every store runner that recognises `json`; an unrecognised file yields no cases. */
export async function runStoreFixture(
  json: unknown,
  context: FixtureRunContext,
): Promise<FixtureCaseResult[]> {
  const results: FixtureCaseResult[] = [];
  for (const runner of storeFixtureRunners) {
    if (!runner.matches(json)) continue;
    try {
      results.push(...(await runner.run(json, context)));
    } catch (error) {
      results.push({
        case: runner.name,
        passed: false as const,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return results;
}
