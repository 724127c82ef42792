import type { PortedMetric } from './metric-function.js';
import { documentMetrics } from './document-metrics.js';
import { structuredMetrics } from './structured-metrics.js';

/** Every OSWorld metric function benchfleet has ported, by its upstream name. */
export const portedMetrics: ReadonlyMap<string, PortedMetric> = new Map(
  [...structuredMetrics, ...documentMetrics].map((metric) => [metric.name, metric]),
);
