import type { PortedMetric } from './metric-function.js';
import { compareArchiveMetric } from './archive-metrics.js';
import { compareEpubMetric } from './epub-metrics.js';
import { compareImageListMetric } from './image-metrics.js';
import { comparePdfsMetric } from './pdf-metrics.js';
import { checkPythonFileByTestSuiteMetric } from './python-test-suite-metrics.js';
import { compareTextFileMetric, diffTextFileMetric } from './text-file-metrics.js';

/** Metrics over files and documents: text files, archives, e-books, PDFs, images, Python test suites. */
export const documentMetrics: readonly PortedMetric[] = [
  compareTextFileMetric,
  diffTextFileMetric,
  checkPythonFileByTestSuiteMetric,
  comparePdfsMetric,
  compareArchiveMetric,
  compareImageListMetric,
  compareEpubMetric,
];
