import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'libs/**/*.test.ts', 'bench/**/*.test.ts', 'deploy/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: ['libs/testing/src/vitest-global-setup.ts'],
  },
});
