import type { PortedMetric } from './metric-function.js';
import { audioTagMetrics } from './audio-tag-metrics.js';
import { basicOsMetrics } from './basic-os-metrics.js';
import { generalMetrics } from './general-metrics.js';
import { thunderbirdMetrics } from './thunderbird-metrics.js';
import { vscodeMetrics } from './vscode-metrics.js';

/** Metrics over values, JSON, text and configuration files (one module per upstream family below). */
export const structuredMetrics: readonly PortedMetric[] = [
  ...generalMetrics,
  ...vscodeMetrics,
  ...thunderbirdMetrics,
  ...basicOsMetrics,
  ...audioTagMetrics,
];
