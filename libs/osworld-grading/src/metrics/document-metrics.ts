import type { PortedMetric } from '../metric-function.js';

/** Metrics over binary documents: archives, e-books, PDFs, images, audio tags, Python test suites. */
export const documentMetrics: readonly PortedMetric[] = [];
