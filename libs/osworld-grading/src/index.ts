export * from './python-value.js';
export type {
  MetricContext,
  MetricFunction,
  PortedMetric,
  PythonRunner,
} from './metric-function.js';
export { portedMetrics } from './metric-registry.js';
export {
  metricFixtureFileSchema,
  decodeFixtureArgs,
  type MetricFixtureCase,
  type MetricFixtureFile,
  type FixtureArg,
} from './fixtures/metric-fixture-file.js';
export { runMetricFixtureCase, type FixtureCaseVerdict } from './fixtures/metric-fixture-case.js';
export { LocalPythonRunner } from './local-python-runner.js';
export { UnsupportedPythonFeature } from './python-exceptions.js';
