export * from './run-comparison.js';
export * from './run-comparison-queries.js';
export { mcnemarExactPValue } from './mcnemar-exact.js';
export {
  pairedBootstrapIntervals,
  DEFAULT_BOOTSTRAP,
  type BootstrapOptions,
} from './paired-bootstrap.js';
export { seededRandom } from './seeded-random.js';
export * from './epoch-statistics.js';
export { runComparisonSqlStatements } from './run-comparison-sql-statements.js';
