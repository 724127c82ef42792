import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { metricFixtureFileSchema } from '../fixtures/metric-fixture-file.js';
import { runMetricFixtureCase } from '../fixtures/metric-fixture-case.js';
import { LocalPythonRunner } from '../python-runners/local-python-runner.js';
import { ARCHIVE_SUB_METRICS } from './archive-metrics.js';
import { portedMetrics } from './metric-registry.js';

const fixturesDir = fileURLToPath(
  new URL('../../../../../shared/osworld/grading/metric-fixtures/', import.meta.url),
);

const metricFiles = (await readdir(fixturesDir)).filter(
  (name) => name.endsWith('.json') && !name.startsWith('_'),
);

// check_python_file_by_test_suite runs the fixtures' test files in this host's python3.
const python = new LocalPythonRunner();

// The golden cases made by OSWorld's own metrics, one test per ported metric.
{
  for (const fileName of metricFiles) {
    const metricName = fileName.replace(/\.json$/, '');
    const metric = portedMetrics.get(metricName);
    if (metric === undefined) continue;
    it(`${metricName}: every case gives the original's value, type and exception`, async () => {
      const file = metricFixtureFileSchema.parse(
        JSON.parse(await readFile(`${fixturesDir}${fileName}`, 'utf8')),
      );
      const failures: string[] = [];
      for (const fixtureCase of file.cases) {
        const verdict = await runMetricFixtureCase(metric, fixtureCase, { python });
        if (!verdict.passed) {
          failures.push(`${fixtureCase.id}: expected ${verdict.expected}, got ${verdict.got}`);
        }
      }
      expect(failures).toEqual([]);
      expect(file.cases.length).toBeGreaterThan(0);
    });
  }
}

it('ports every metric of the phase-1 tasks, and only those, under their upstream names', () => {
  const fixtured = new Set(metricFiles.map((name) => name.replace(/\.json$/, '')));
  expect([...portedMetrics.keys()].filter((name) => !fixtured.has(name))).toEqual([]);
  expect([...fixtured].filter((name) => !portedMetrics.has(name))).toEqual([]);
  expect(fixtured.size).toBe(24);
});

it('compare_archive hands each file type to our port of its sub-metric whenever there is one', () => {
  for (const [fileType, { upstream, ported }] of Object.entries(ARCHIVE_SUB_METRICS)) {
    expect({ fileType, sub: ported?.name }).toEqual({
      fileType,
      sub: portedMetrics.has(upstream) ? upstream : undefined,
    });
  }
});
