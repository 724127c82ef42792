import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run for minutes, started first: with three files at a time, the suite ends when its
 * longest file does, so a 10-minute file picked up late adds its whole length to the suite's. On a
 * fresh clone vitest has no timings cached and orders by file size, which puts them anywhere.
 */
const LONG_FILES_FIRST = [
  /worker-osworld-real-desktop-upstream\.test\.ts$/,
  /worker-osworld-real-desktop\.test\.ts$/,
  /new-benchmark-from-recipe\.test\.ts$/,
];

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONG_FILES_FIRST.findIndex((pattern) => pattern.test(file.moduleId));
      return at === -1 ? LONG_FILES_FIRST.length : at;
    };
    return sorted
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    include: [
      'apps/**/*.test.ts',
      'libs/**/*.test.ts',
      'bench/**/*.test.ts',
      'deploy/**/*.test.ts',
      'examples/**/*.test.ts',
      // A file outside the suite, for the test that checks `npm test`'s exit code.
      ...(process.env.BENCHFLEET_EXTRA_TEST_FILE ? [process.env.BENCHFLEET_EXTRA_TEST_FILE] : []),
    ],
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    // Three files at once on two cores: most of a test's time is spent waiting on child processes,
    // service restarts and fault windows, not on CPU (the whole suite used 1.07 of the 2 cores two
    // files at a time: 7m44s one at a time, 4m44s two at a time when it had 89 files; 12m40s two at
    // a time at 192 files, part of it under load).
    maxWorkers: 3,
    // Bounds that only catch a hang: at load 15-27 on 2 cores a CLI's start alone took 60-90 s, and
    // a test of several CLIs passed 120 s. Tests wait for events, never for an amount of time.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    globalSetup: ['libs/testing/src/vitest-global-setup.ts'],
    sequence: { sequencer: LongFilesFirst },
  },
});
