// WebShop's goal.py: get_type_reward, get_attribute_reward, get_option_reward and get_reward.
import type { WebshopGoalOptions } from '../catalog/catalog-schemas.js';
import { pythonStrip } from '../catalog/python-text.js';
import { tokenSetRatio, type FuzzyInput, type FuzzyOptions } from './fuzzy-match.js';
import { defaultNounExtractor, type NounExtractor } from './noun-extractor.js';
import { normalizeColor } from './normalize.js';

/** A fuzzy score must exceed this (on thefuzz's 0–100 integer scale) to count as a match. */
export const FUZZY_MATCH_THRESHOLD = 85;
const CATEGORY_SEPARATOR = '›';

/** The purchased product's fields the reward reads (a loaded WebshopProduct has them all). */
export type RewardProduct = {
  query: string;
  product_category: string;
  name: string;
  Attributes: readonly string[];
  Title: string;
  /** Always a list after loading; a plain string is joined character by character, as upstream. */
  BulletPoints: readonly string[] | string;
  Description: string;
};

/** The goal's fields the reward reads (a WebshopGoal has them all). */
export type RewardGoal = {
  query: string;
  product_category: string;
  name: string;
  attributes: readonly string[];
  goal_options: WebshopGoalOptions;
  price_upper: number;
};

export type TypeReward = {
  r_type: number;
  query_match: boolean;
  category_match: boolean;
  title_score: number;
};

function categorySegments(category: string): Set<string> {
  return new Set(category.split(CATEGORY_SEPARATOR).map((segment) => pythonStrip(segment)));
}

/**
 * `get_type_reward`: query equality, at least 2 shared category segments, and the share of the goal
 * title's nouns (duplicates counted in the denominator) found among the purchased title's nouns.
 */
export function getTypeReward(
  purchased: Pick<RewardProduct, 'query' | 'product_category' | 'name'>,
  goal: Pick<RewardGoal, 'query' | 'product_category' | 'name'>,
  nounExtractor: NounExtractor = defaultNounExtractor(),
): TypeReward {
  const queryMatch = purchased.query === goal.query;
  const goalSegments = categorySegments(goal.product_category);
  const sharedSegments = [...categorySegments(purchased.product_category)].filter((segment) =>
    goalSegments.has(segment),
  );
  const categoryMatch = sharedSegments.length >= 2;

  const purchasedNouns = new Set(nounExtractor.nouns(purchased.name));
  const goalNouns = nounExtractor.nouns(goal.name);
  const sharedNouns = new Set(goalNouns.filter((noun) => purchasedNouns.has(noun)));
  const titleScore = goalNouns.length === 0 ? 0.2 : sharedNouns.size / goalNouns.length;

  let rType = 1.0;
  if (!queryMatch && !categoryMatch && !(titleScore > 0.2)) rType = 0.5;
  if (titleScore < 0.1) rType = 0.1;
  if (titleScore === 0.0) rType = 0.0;
  return {
    r_type: rType,
    query_match: queryMatch,
    category_match: categoryMatch,
    title_score: titleScore,
  };
}

// Python `' '.join(x)`: a str is iterated character by character.
function joinWithSpaces(items: readonly string[] | string): string {
  return (typeof items === 'string' ? Array.from(items) : items).join(' ');
}

export type AttributeReward = { r_attr: number; num_attr_matches: number };

/**
 * `get_attribute_reward`: a goal attribute counts once if some product attribute fuzzy-matches it
 * (> 85), or else if it is a substring of the lowercased title, bullet points or description.
 */
export function getAttributeReward(
  purchased: Pick<RewardProduct, 'Attributes' | 'Title' | 'BulletPoints' | 'Description'>,
  goal: Pick<RewardGoal, 'attributes'>,
  options: FuzzyOptions = {},
): AttributeReward {
  if (goal.attributes.length === 0)
    throw new RangeError(
      'get_attribute_reward: the goal has no attributes (division by zero upstream)',
    );
  const title = purchased.Title.toLowerCase();
  const bulletPoints = joinWithSpaces(purchased.BulletPoints).toLowerCase();
  const description = purchased.Description.toLowerCase();
  let matches = 0;
  for (const goalAttribute of goal.attributes) {
    const fuzzyMatch = purchased.Attributes.some(
      (attribute) => tokenSetRatio(attribute, goalAttribute, options) > FUZZY_MATCH_THRESHOLD,
    );
    if (fuzzyMatch) {
      matches += 1;
    } else if (
      title.includes(goalAttribute) ||
      bulletPoints.includes(goalAttribute) ||
      description.includes(goalAttribute)
    ) {
      matches += 1;
    }
  }
  return { r_attr: matches / goal.attributes.length, num_attr_matches: matches };
}

export type OptionReward = { r_option: number | null; num_option_matches: number };

/**
 * `get_option_reward`: after normalizeColor on both sides, a goal option counts once if some purchased
 * option fuzzy-matches it (> 85). `r_option` is null when the goal has no options.
 */
export function getOptionReward(
  purchasedOptions: readonly FuzzyInput[],
  goalOptions: readonly FuzzyInput[],
  options: FuzzyOptions = {},
): OptionReward {
  const purchased = purchasedOptions.map(normalizeColor);
  const goal = goalOptions.map(normalizeColor);
  let matches = 0;
  for (const goalOption of goal) {
    if (
      purchased.some((option) => tokenSetRatio(option, goalOption, options) > FUZZY_MATCH_THRESHOLD)
    )
      matches += 1;
  }
  return { r_option: goal.length > 0 ? matches / goal.length : null, num_option_matches: matches };
}

/** A synthetic goal's option dict reaches get_option_reward as `(name, value)` tuples. */
function goalOptionsForReward(goalOptions: WebshopGoalOptions): FuzzyInput[] {
  if (Array.isArray(goalOptions)) return [...goalOptions];
  return Object.entries(goalOptions).map(([name, value]) => [name, value] as const);
}

function goalOptionCount(goalOptions: WebshopGoalOptions): number {
  return Array.isArray(goalOptions) ? goalOptions.length : Object.keys(goalOptions).length;
}

/** get_reward's verbose info, with upstream's key order; option and price keys only when computed. */
type RewardInfo = {
  r_type: number;
  r_att: number;
  w_att: number;
  query_match: boolean;
  category_match: boolean;
  title_score: number;
  r_option?: number;
  w_option?: number;
  r_price?: boolean;
  w_price?: number;
};

export type RewardResult = { reward: number; info: RewardInfo };

export type GetRewardOptions = FuzzyOptions & {
  nounExtractor?: NounExtractor;
  /** Replaces get_type_reward, e.g. to inject `r_type` in tests. */
  typeReward?: (purchased: RewardProduct, goal: RewardGoal) => TypeReward;
};

/**
 * `get_reward(purchased_product, goal, price, options, verbose=True)`:
 * r_type × (attribute matches + option matches + [price ≤ price_upper]) / (|attributes| + |options| + 1).
 * `price` is the hidden product price; `options` the session's {option name: chosen value}.
 * Success is reward === 1.
 */
export function getReward(
  purchased: RewardProduct,
  goal: RewardGoal,
  price: number,
  options: Readonly<Record<string, string>>,
  rewardOptions: GetRewardOptions = {},
): RewardResult {
  const typeReward =
    rewardOptions.typeReward?.(purchased, goal) ??
    getTypeReward(purchased, goal, rewardOptions.nounExtractor);
  // Upstream leaves r_price None for price_upper <= 0 and then fails adding it; it never happens.
  if (!(goal.price_upper > 0))
    throw new RangeError(`get_reward: price_upper must be positive (got ${goal.price_upper})`);
  const priceOk = price <= goal.price_upper;
  const attribute = getAttributeReward(purchased, goal, rewardOptions);
  const option = getOptionReward(
    Object.values(options),
    goalOptionsForReward(goal.goal_options),
    rewardOptions,
  );

  const optionCount = goalOptionCount(goal.goal_options);
  const denominator = goal.attributes.length + optionCount + 1;
  let reward =
    (attribute.num_attr_matches + option.num_option_matches + (priceOk ? 1 : 0)) / denominator;
  reward *= typeReward.r_type;

  const info: RewardInfo = {
    r_type: typeReward.r_type,
    r_att: attribute.r_attr,
    w_att: goal.attributes.length / denominator,
    query_match: typeReward.query_match,
    category_match: typeReward.category_match,
    title_score: typeReward.title_score,
  };
  if (option.r_option !== null) {
    info.r_option = option.r_option;
    info.w_option = optionCount / denominator;
  }
  info.r_price = priceOk;
  info.w_price = 1 / denominator;
  return { reward, info };
}
