// Public face of the webshop reward: get_reward and its parts, thefuzz/difflib parity, fixture runners.
export {
  checkCase,
  checkCaseAsync,
  expectSameJson,
  runFixtureFile,
  runFixtureJson,
  type FixtureCaseResult,
  type FixtureRunContext,
  type FixtureRunner,
  type FixtureRunSummary,
} from './fixture-runner.js';
export {
  fullProcess,
  fuzzRatio,
  tokenSetRatio,
  type FuzzyBackend,
  type FuzzyInput,
  type FuzzyOptions,
} from './fuzzy-match.js';
export {
  FUZZY_MATCH_THRESHOLD,
  getAttributeReward,
  getOptionReward,
  getReward,
  getTypeReward,
  goalOptionsForReward,
  type AttributeReward,
  type GetRewardOptions,
  type OptionReward,
  type RewardGoal,
  type RewardInfo,
  type RewardProduct,
  type RewardResult,
  type TypeReward,
} from './get-reward.js';
export {
  createWinkNounExtractor,
  defaultNounExtractor,
  tableNounExtractor,
  type NounExtractor,
} from './noun-extractor.js';
export {
  COLOR_SET,
  normalizeColor,
  normalizeColorSize,
  SIZE_PATTERN_SOURCES,
  SIZE_SET,
  type ColorSizeMappings,
} from './normalize.js';
export {
  envEpisodeGoalsAndRewardsFixtureRunner,
  pythonRandomFixtureRunner,
  rewardUnitsFixtureRunner,
  tokenSetRatioBackendDiffsFixtureRunner,
  verifyRewardFixtures,
  webshopRewardFixtureRunners,
} from './reward-fixture-runners.js';
export { levenshteinRatio } from './levenshtein-ratio.js';
