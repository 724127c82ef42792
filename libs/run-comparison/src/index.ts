export * from './run-comparison.js';
export * from './run-comparison-queries.js';
export { mcnemarExactPValue } from './mcnemar-exact.js';
export {
  pairedBootstrapIntervals,
  quantileOfSorted,
  DEFAULT_BOOTSTRAP,
  type BootstrapOptions,
  type Interval,
} from './paired-bootstrap.js';
export { seededRandom } from './seeded-random.js';
