import type { PortedMetric } from './metric-function.js';
import { documentMetrics } from './metrics/document-metrics.js';
import { structuredMetrics } from './metrics/structured-metrics.js';

/** Every OSWorld metric function benchfleet has ported, by its upstream name. */
export const portedMetrics: ReadonlyMap<string, PortedMetric> = new Map(
  [...structuredMetrics, ...documentMetrics].map((metric) => [metric.name, metric]),
);
