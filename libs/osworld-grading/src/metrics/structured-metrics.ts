import type { PortedMetric } from '../metric-function.js';

/** Metrics over values, JSON, text and configuration files (one module per upstream family below). */
export const structuredMetrics: readonly PortedMetric[] = [];
