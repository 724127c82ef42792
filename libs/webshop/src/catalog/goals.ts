import type { WebshopGoal, WebshopProduct } from './catalog-schemas.js';
import { PythonRandom } from './python-random.js';
import { pythonStrip, sortedPythonStrings } from './python-text.js';

/** 10.0, 20.0, …, 990.0: the candidate price limits. */
export const PRICE_RANGE: readonly number[] = Array.from({ length: 99 }, (_, i) => 10.0 * (i + 1));
/** `price_upper` when fewer than two candidates lie above the product's price (an int upstream). */
export const NO_PRICE_LIMIT = 1000000;
/** WebShop orders its goals with `random.seed(233); random.shuffle(goals)`. */
const GOAL_ORDER_SEED = 233;

export type PriceLimit = { priceUpper: number; priceText: string };

/**
 * Draws a goal's `price_upper`: the larger of two distinct values sampled from the first (up to) four
 * entries of PRICE_RANGE strictly above `price`, and the matching ", and price lower than …" text.
 */
export function drawPriceLimit(price: number, rng: PythonRandom): PriceLimit {
  const candidates = PRICE_RANGE.filter((limit) => limit > price).slice(0, 4);
  if (candidates.length < 2) return { priceUpper: NO_PRICE_LIMIT, priceText: '' };
  const pair = rng.sample(candidates, 2);
  const priceUpper = Math.max(pair[0] ?? 0, pair[1] ?? 0);
  return { priceUpper, priceText: `, and price lower than ${priceUpper.toFixed(2)} dollars` };
}

function priceOf(prices: ReadonlyMap<string, number>, asin: string): number {
  const price = prices.get(asin);
  if (price === undefined) throw new Error(`no hidden price for asin ${asin}`);
  return price;
}

export type HumanGoals = { goals: WebshopGoal[]; skipped: number };

/**
 * `get_human_goals`: one goal per human instruction with at least one instruction attribute, in
 * product order then instruction order, drawing one price limit per goal from `rng`.
 */
export function getHumanGoals(
  products: readonly WebshopProduct[],
  prices: ReadonlyMap<string, number>,
  rng: PythonRandom,
): HumanGoals {
  const goals: WebshopGoal[] = [];
  let skipped = 0;
  for (const product of products) {
    if (product.instructions === undefined) continue;
    for (const instruction of product.instructions) {
      const attributes = instruction.instruction_attributes;
      if (attributes.length === 0) {
        skipped += 1;
        continue;
      }
      const { priceUpper, priceText } = drawPriceLimit(priceOf(prices, product.asin), rng);
      goals.push({
        asin: product.asin,
        category: product.category,
        query: product.query,
        name: product.name,
        product_category: product.product_category,
        instruction_text: `${pythonStrip(instruction.instruction, '.')}${priceText}`,
        attributes: [...attributes],
        price_upper: priceUpper,
        goal_options: [...instruction.instruction_options],
        weight: 1,
      });
    }
  }
  return { goals, skipped };
}

function cartesianProduct(lists: readonly (readonly string[])[]): string[][] {
  let combinations: string[][] = [[]];
  for (const list of lists) {
    const next: string[][] = [];
    for (const prefix of combinations) {
      for (const value of list) next.push([...prefix, value]);
    }
    combinations = next;
  }
  return combinations;
}

/**
 * `get_synthetic_goals`: for every product with a synthetic instruction, one goal per combination of
 * option values (option names in Python sort order, the first varying slowest), one price-limit draw
 * per product; `weight` is the mean over the goal's attributes of 1 / (goals carrying that attribute).
 */
export function getSyntheticGoals(
  products: readonly WebshopProduct[],
  prices: ReadonlyMap<string, number>,
  rng: PythonRandom,
): WebshopGoal[] {
  const goals: WebshopGoal[] = [];
  const attributeCounts = new Map<string, number>();
  for (const product of products) {
    const instruction = product.instruction_text;
    if (instruction === undefined || instruction === null) continue;
    const attributes = product.instruction_attributes;
    if (attributes === undefined || attributes === null || attributes.length === 0) {
      throw new Error(
        `product ${product.asin} has a synthetic instruction but no instruction_attributes`,
      );
    }
    const { priceUpper, priceText } = drawPriceLimit(priceOf(prices, product.asin), rng);
    const optionNames = sortedPythonStrings(Object.keys(product.options));
    const combinations = cartesianProduct(optionNames.map((name) => product.options[name] ?? []));
    for (const combination of combinations) {
      const goalOptions: Record<string, string> = {};
      const optionParts: string[] = [];
      optionNames.forEach((name, i) => {
        const value = combination[i] ?? '';
        goalOptions[name] = value;
        optionParts.push(`${name}: ${value}`);
      });
      const optionText = optionParts.length === 0 ? '' : ` with ${optionParts.join(', and ')}`;
      goals.push({
        asin: product.asin,
        category: product.category,
        query: product.query,
        name: product.Title,
        product_category: product.product_category,
        instruction_text: `${instruction}${optionText}${priceText}`,
        attributes: [...attributes],
        price_upper: priceUpper,
        goal_options: goalOptions,
        weight: 0,
      });
      for (const attribute of attributes)
        attributeCounts.set(attribute, (attributeCounts.get(attribute) ?? 0) + 1);
    }
  }
  for (const goal of goals) {
    let sum = 0;
    for (const attribute of goal.attributes) sum += 1 / (attributeCounts.get(attribute) ?? 1);
    goal.weight = sum / goal.attributes.length;
  }
  return goals;
}

/** The goal order WebShop uses (goal index = position): `random.seed(233)` then `random.shuffle`. */
export function orderGoalsLikeWebshop<T>(goals: readonly T[]): T[] {
  const ordered = goals.slice();
  new PythonRandom(GOAL_ORDER_SEED).shuffle(ordered);
  return ordered;
}

export type WebshopGoalSplit = 'test' | 'eval' | 'train';

/** Goal index ranges with the full catalogue and human goals: test 0–499, eval 500–1499, train 1500+. */
const WEBSHOP_GOAL_SPLITS: Readonly<
  Record<WebshopGoalSplit, { start: number; end: number | null }>
> = {
  test: { start: 0, end: 500 },
  eval: { start: 500, end: 1500 },
  train: { start: 1500, end: null },
};

export function webshopGoalSplit(goalIndex: number): WebshopGoalSplit {
  if (!Number.isInteger(goalIndex) || goalIndex < 0)
    throw new RangeError(`invalid goal index ${goalIndex}`);
  if (goalIndex < WEBSHOP_GOAL_SPLITS.eval.start) return 'test';
  if (goalIndex < WEBSHOP_GOAL_SPLITS.train.start) return 'eval';
  return 'train';
}
