// Public face of the webshop reward: get_reward and its parts, thefuzz/difflib parity, fixture runners.
export {
  checkCase,
  checkCaseAsync,
  expectSameJson,
  runFixtureFile,
  type FixtureCaseResult,
  type FixtureRunContext,
  type FixtureRunner,
} from './fixture-runner.js';
export { getReward, type RewardProduct } from './get-reward.js';
export { defaultNounExtractor, tableNounExtractor, type NounExtractor } from './noun-extractor.js';
export { webshopRewardFixtureRunners } from './reward-fixture-runners.js';
