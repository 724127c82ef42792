import { z } from 'zod';
import {
  webshopGoalSchema,
  webshopProductSchema,
  type WebshopProduct,
} from '../catalog/catalog-schemas.js';
import { getHumanGoals, getSyntheticGoals, orderGoalsLikeWebshop } from '../catalog/goals.js';
import { generateProductPrices } from '../catalog/product-prices.js';
import { PythonRandom } from '../catalog/python-random.js';
import { pythonTupleRepr } from '../catalog/python-text.js';
import {
  checkCase,
  expectSameJson,
  runFixtureFile,
  type FixtureCaseResult,
  type FixtureRunner,
  type FixtureRunSummary,
} from './fixture-runner.js';
import { fuzzRatio, tokenSetRatio } from './fuzzy-match.js';
import {
  FUZZY_MATCH_THRESHOLD,
  getAttributeReward,
  getOptionReward,
  getReward,
} from './get-reward.js';
import { tableNounExtractor } from './noun-extractor.js';
import { normalizeColor, normalizeColorSize } from './normalize.js';

function isObject(json: unknown): json is Record<string, unknown> {
  return typeof json === 'object' && json !== null && !Array.isArray(json);
}

function sectionCases<T>(
  section: string,
  value: unknown,
  schema: z.ZodType<T>,
  check: (item: T, caseName: string) => FixtureCaseResult,
  nameOf: (item: T, index: number) => string = (_, index) => String(index),
): FixtureCaseResult[] {
  if (value === undefined) return [];
  const parsed = z.array(z.unknown()).safeParse(value);
  if (!parsed.success)
    return [{ case: section, passed: false, message: 'expected a list of cases' }];
  return parsed.data.map((raw, index) => {
    const item = schema.safeParse(raw);
    if (!item.success)
      return { case: `${section}/${index}`, passed: false, message: z.prettifyError(item.error) };
    const caseName = `${section}/${nameOf(item.data, index)}`;
    return checkCase(caseName, () => check(item.data, caseName));
  });
}

const stringOrTuple = z.union([z.string(), z.array(z.string())]);

const tokenPairSchema = z.object({
  s1: z.string(),
  s2: stringOrTuple,
  s2_is_python_tuple: z.boolean().optional(),
  s2_str: z.string().optional(),
  token_set_ratio: z.number(),
  ratio: z.number().optional(),
});

const normalizeColorCaseSchema = z.object({
  input: stringOrTuple,
  input_is_python_tuple: z.boolean().optional(),
  output: stringOrTuple,
});

const normalizeColorSizeSchema = z.object({
  input_keys: z.array(z.tuple([z.unknown(), z.string(), z.string()])),
  color_mapping: z.record(z.string(), z.string()),
  size_mapping: z.record(z.string(), z.string()),
});

const rewardProductSchema = z.object({
  query: z.string().default(''),
  product_category: z.string().default(''),
  name: z.string().default(''),
  Attributes: z.array(z.string()),
  Title: z.string(),
  BulletPoints: z.union([z.string(), z.array(z.string())]),
  Description: z.string(),
});

const attributeCaseSchema = z.object({
  purchased: rewardProductSchema,
  goal_attributes: z.array(z.string()),
  r_attr: z.number(),
  num_attr_matches: z.number(),
});

const optionCaseSchema = z.object({
  purchased_options: z.array(z.string()),
  goal_options: z.array(stringOrTuple),
  goal_options_are_python_tuples: z.boolean().optional(),
  r_option: z.number().nullable(),
  num_option_matches: z.number(),
});

const rewardCaseSchema = z.object({
  name: z.string(),
  purchased: rewardProductSchema,
  goal: z.object({
    query: z.string(),
    product_category: z.string(),
    name: z.string(),
    attributes: z.array(z.string()),
    goal_options: z.union([z.array(z.string()), z.record(z.string(), z.string())]),
    price_upper: z.number(),
  }),
  price: z.number(),
  options: z.record(z.string(), z.string()),
  injected_r_type: z.number(),
  total_reward: z.number(),
  info_without_type_fields: z.record(z.string(), z.unknown()),
});

const REWARD_UNIT_SECTIONS = [
  'token_set_ratio_pairs',
  'normalize_color',
  'normalize_color_size',
  'get_attribute_reward',
  'get_option_reward',
  'get_reward',
] as const;

const TYPE_FIELDS = new Set(['query_match', 'category_match', 'title_score']);

function sortedEntries(
  record: Readonly<Record<string, string>> | ReadonlyMap<string, string>,
): [string, string][] {
  const entries = record instanceof Map ? [...record.entries()] : Object.entries(record);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function runRewardUnits(json: unknown): FixtureCaseResult[] {
  if (!isObject(json)) return [];
  const results: FixtureCaseResult[] = [];
  if (json.fuzz_backend !== undefined && json.fuzz_backend !== 'difflib') {
    results.push({
      case: 'fuzz_backend',
      passed: false,
      message: `only the difflib backend is reproduced (file says ${String(json.fuzz_backend)})`,
    });
  }

  results.push(
    ...sectionCases(
      'token_set_ratio_pairs',
      json.token_set_ratio_pairs,
      tokenPairSchema,
      (pair, caseName) => {
        // A JSON list stands for a Python tuple (flagged `s2_is_python_tuple`).
        const actual: Record<string, unknown> = {
          token_set_ratio: tokenSetRatio(pair.s1, pair.s2),
        };
        const expected: Record<string, unknown> = { token_set_ratio: pair.token_set_ratio };
        if (pair.ratio !== undefined && typeof pair.s2 === 'string') {
          actual.ratio = fuzzRatio(pair.s1, pair.s2);
          expected.ratio = pair.ratio;
        }
        if (pair.s2_str !== undefined && typeof pair.s2 !== 'string') {
          actual.s2_str = pythonTupleRepr(pair.s2);
          expected.s2_str = pair.s2_str;
        }
        return expectSameJson(caseName, actual, expected);
      },
      (pair, index) => `${index} ${JSON.stringify(pair.s1)} vs ${JSON.stringify(pair.s2)}`,
    ),
  );

  results.push(
    ...sectionCases(
      'normalize_color',
      json.normalize_color,
      normalizeColorCaseSchema,
      (item, caseName) => {
        return expectSameJson(caseName, normalizeColor(item.input), item.output);
      },
      (item, index) => `${index} ${JSON.stringify(item.input)}`,
    ),
  );

  if (json.normalize_color_size !== undefined) {
    const parsed = normalizeColorSizeSchema.safeParse(json.normalize_color_size);
    if (!parsed.success) {
      results.push({
        case: 'normalize_color_size',
        passed: false,
        message: z.prettifyError(parsed.error),
      });
    } else {
      const { colorMapping, sizeMapping } = normalizeColorSize(parsed.data.input_keys);
      // Upstream fills these from Python sets, so only the pairs are compared, not their order.
      results.push(
        expectSameJson(
          'normalize_color_size/color_mapping',
          sortedEntries(colorMapping),
          sortedEntries(parsed.data.color_mapping),
        ),
      );
      results.push(
        expectSameJson(
          'normalize_color_size/size_mapping',
          sortedEntries(sizeMapping),
          sortedEntries(parsed.data.size_mapping),
        ),
      );
    }
  }

  results.push(
    ...sectionCases(
      'get_attribute_reward',
      json.get_attribute_reward,
      attributeCaseSchema,
      (item, caseName) =>
        expectSameJson(
          caseName,
          getAttributeReward(item.purchased, { attributes: item.goal_attributes }),
          {
            r_attr: item.r_attr,
            num_attr_matches: item.num_attr_matches,
          },
        ),
    ),
  );

  results.push(
    ...sectionCases(
      'get_option_reward',
      json.get_option_reward,
      optionCaseSchema,
      (item, caseName) => {
        return expectSameJson(
          caseName,
          getOptionReward(item.purchased_options, item.goal_options),
          {
            r_option: item.r_option,
            num_option_matches: item.num_option_matches,
          },
        );
      },
    ),
  );

  results.push(
    ...sectionCases(
      'get_reward',
      json.get_reward,
      rewardCaseSchema,
      (item, caseName) => {
        const { reward, info } = getReward(item.purchased, item.goal, item.price, item.options, {
          typeReward: () => ({
            r_type: item.injected_r_type,
            query_match: false,
            category_match: false,
            title_score: 0,
          }),
        });
        const infoWithoutTypeFields = Object.fromEntries(
          Object.entries(info).filter(([key]) => !TYPE_FIELDS.has(key)),
        );
        return expectSameJson(
          caseName,
          { reward, info: infoWithoutTypeFields },
          { reward: item.total_reward, info: item.info_without_type_fields },
        );
      },
      (item) => item.name,
    ),
  );
  return results;
}

/** reward_units.json: thefuzz pairs, normalize_color(_size), attribute/option/total reward cases. */
const rewardUnitsFixtureRunner: FixtureRunner = {
  name: 'webshop reward units',
  matches: (json) =>
    isObject(json) && REWARD_UNIT_SECTIONS.some((section) => json[section] !== undefined),
  run: (json) => runRewardUnits(json),
};

const backendDiffPairSchema = z.object({
  s1: z.string(),
  s2: stringOrTuple,
  difflib: z.number(),
  levenshtein: z.number(),
});

/** token_set_ratio_backend_diffs.json: both backends' scores, and that neither crosses the threshold. */
const tokenSetRatioBackendDiffsFixtureRunner: FixtureRunner = {
  name: 'webshop token_set_ratio backend diffs',
  matches: (json) =>
    isObject(json) &&
    Array.isArray(json.pairs) &&
    json.pairs.some((pair) => isObject(pair) && 'difflib' in pair && 'levenshtein' in pair),
  run: (json) =>
    sectionCases(
      'pairs',
      isObject(json) ? json.pairs : undefined,
      backendDiffPairSchema,
      (pair, caseName) => {
        const difflib = tokenSetRatio(pair.s1, pair.s2);
        const levenshtein = tokenSetRatio(pair.s1, pair.s2, { backend: 'levenshtein' });
        const sameSide = difflib > FUZZY_MATCH_THRESHOLD === levenshtein > FUZZY_MATCH_THRESHOLD;
        return expectSameJson(
          caseName,
          { difflib, levenshtein, sameSideOfThreshold: sameSide },
          {
            difflib: pair.difflib,
            levenshtein: pair.levenshtein,
            sameSideOfThreshold:
              pair.difflib > FUZZY_MATCH_THRESHOLD === pair.levenshtein > FUZZY_MATCH_THRESHOLD,
          },
        );
      },
      (pair, index) => `${index} ${JSON.stringify(pair.s1)} vs ${JSON.stringify(pair.s2)}`,
    ),
};

const pythonRandomFixtureSchema = z.looseObject({
  seed: z.number().int(),
  shuffle_permutations: z.record(z.string(), z.array(z.number().int())),
});

/** python_random_seed233.json: shuffle permutations and first raw outputs after `random.seed(seed)`. */
const pythonRandomFixtureRunner: FixtureRunner = {
  name: 'CPython random',
  matches: (json) => pythonRandomFixtureSchema.safeParse(json).success,
  run: (json) => {
    const fixture = pythonRandomFixtureSchema.parse(json);
    const results: FixtureCaseResult[] = [];
    for (const [size, permutation] of Object.entries(fixture.shuffle_permutations)) {
      results.push(
        checkCase(`shuffle/${size}`, () => {
          const items = Array.from({ length: Number(size) }, (_, index) => index);
          new PythonRandom(fixture.seed).shuffle(items);
          return expectSameJson(`shuffle/${size}`, items, permutation);
        }),
      );
    }
    for (const [key, value] of Object.entries(fixture)) {
      const draws = z.array(z.number()).safeParse(value);
      if (!draws.success) continue;
      const rng = new PythonRandom(fixture.seed);
      if (key.startsWith('first_random_random')) {
        results.push(
          expectSameJson(
            key,
            draws.data.map(() => rng.random()),
            draws.data,
          ),
        );
      } else if (key.startsWith('first_getrandbits32')) {
        results.push(
          expectSameJson(
            key,
            draws.data.map(() => Number(rng.getrandbits(32))),
            draws.data,
          ),
        );
      }
    }
    return results;
  },
};

const episodeModeSchema = z.looseObject({
  products: z.array(z.unknown()),
  product_prices: z.record(z.string(), z.number()),
  goals: z.array(z.unknown()),
  episodes: z.array(
    z.looseObject({
      name: z.string(),
      goal_index: z.number().int(),
      goal: z.unknown(),
      steps: z.array(z.looseObject({})),
    }),
  ),
});
const envEpisodesSchema = z.looseObject({
  human: episodeModeSchema.optional(),
  synthetic: episodeModeSchema.optional(),
  standin_title_nouns: z.record(z.string(), z.array(z.string())).optional(),
  notes: z.looseObject({ rng: z.string().optional() }).optional(),
});
const purchaseSchema = z.object({
  asin: z.string(),
  options: z.record(z.string(), z.string()),
  price: z.number(),
});

function runEpisodeGoalsAndRewards(json: unknown): FixtureCaseResult[] {
  const fixture = envEpisodesSchema.parse(json);
  const results: FixtureCaseResult[] = [];
  const seedText =
    fixture.notes?.rng === undefined
      ? undefined
      : /random\.seed\((\d+)\)/.exec(fixture.notes.rng)?.[1];
  const priceSeed = seedText === undefined ? undefined : Number(seedText);
  const nounExtractor =
    fixture.standin_title_nouns === undefined
      ? undefined
      : tableNounExtractor(fixture.standin_title_nouns, { name: 'standin_title_nouns' });

  for (const mode of ['human', 'synthetic'] as const) {
    const section = fixture[mode];
    if (section === undefined) continue;
    const products: WebshopProduct[] = [];
    const productsOk = section.products.every((raw, index) => {
      const parsed = webshopProductSchema.safeParse(raw);
      if (!parsed.success) {
        results.push({
          case: `${mode}/products/${index}`,
          passed: false,
          message: z.prettifyError(parsed.error),
        });
        return false;
      }
      products.push(parsed.data);
      return true;
    });
    if (!productsOk) continue;
    const goals = z.array(webshopGoalSchema).safeParse(section.goals);
    if (!goals.success) {
      results.push({ case: `${mode}/goals`, passed: false, message: z.prettifyError(goals.error) });
      continue;
    }

    if (priceSeed !== undefined) {
      results.push(
        checkCase(`${mode}/prices and goals from random.seed(${priceSeed})`, () => {
          const rng = new PythonRandom(priceSeed);
          const prices = generateProductPrices(products, rng);
          const generated =
            mode === 'human'
              ? getHumanGoals(products, prices, rng).goals
              : getSyntheticGoals(products, prices, rng);
          return expectSameJson(
            `${mode}/prices and goals from random.seed(${priceSeed})`,
            { prices: Object.fromEntries(prices), goals: orderGoalsLikeWebshop(generated) },
            { prices: section.product_prices, goals: section.goals },
          );
        }),
      );
    }

    const productByAsin = new Map(products.map((product) => [product.asin, product]));
    for (const episode of section.episodes) {
      const caseName = `${mode}/${episode.name}`;
      results.push(
        expectSameJson(`${caseName}/goal`, section.goals[episode.goal_index], episode.goal),
      );
      const lastStep = episode.steps.at(-1);
      if (
        lastStep === undefined ||
        lastStep.verbose_info === undefined ||
        nounExtractor === undefined
      )
        continue;
      results.push(
        checkCase(`${caseName}/reward`, () => {
          const purchase = purchaseSchema.parse(lastStep.purchased);
          const goal = webshopGoalSchema.parse(episode.goal);
          const product = productByAsin.get(purchase.asin);
          if (product === undefined)
            throw new Error(`purchased asin ${purchase.asin} is not among the products`);
          const price = section.product_prices[purchase.asin];
          const { reward, info } = getReward(product, goal, price ?? Number.NaN, purchase.options, {
            nounExtractor,
          });
          return expectSameJson(
            `${caseName}/reward`,
            { reward, info, price },
            { reward: lastStep.reward, info: lastStep.verbose_info, price: purchase.price },
          );
        }),
      );
    }
  }
  return results;
}

/**
 * env_episodes.json, the parts owned by catalog and reward: hidden prices and goals regenerated from
 * the processed products with the recorded seed, each episode's goal, and the final reward and info
 * with the fixture's stand-in noun table. The page-by-page steps are for the store's runner.
 */
const envEpisodeGoalsAndRewardsFixtureRunner: FixtureRunner = {
  name: 'webshop episode goals and rewards',
  matches: (json) => {
    const parsed = envEpisodesSchema.safeParse(json);
    return (
      parsed.success && (parsed.data.human !== undefined || parsed.data.synthetic !== undefined)
    );
  },
  run: (json) => runEpisodeGoalsAndRewards(json),
};

/** The runners of the catalog and reward modules. */
export const webshopRewardFixtureRunners: readonly FixtureRunner[] = [
  rewardUnitsFixtureRunner,
  tokenSetRatioBackendDiffsFixtureRunner,
  pythonRandomFixtureRunner,
  envEpisodeGoalsAndRewardsFixtureRunner,
];

/** Runs a fixture file through the catalog and reward runners (reward_units, backend diffs, random, episodes). */
export function verifyRewardFixtures(filePath: string): Promise<FixtureRunSummary> {
  return runFixtureFile(filePath, webshopRewardFixtureRunners);
}
