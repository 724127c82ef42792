// ESLint for the whole workspace (`npm run lint` runs it with --max-warnings 0).
//
// What it holds the code to: a promise is awaited, returned or handed on (never dropped, never given
// where a plain value is expected), and no module reaches itself again through its imports. The
// promise rules need types: typescript-eslint's project service reads each file's nearest
// tsconfig.json (the root one, or the dashboard's web one); the few TypeScript files no tsconfig
// includes are listed in `allowDefaultProject` below.
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const typescriptFiles = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const javascriptFiles = ['**/*.js', '**/*.mjs', '**/*.cjs'];

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/.dist-building-*/**',
      'coverage/**',
      '.artifacts/**',
      '.benchfleet/**',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  // Import cycles, across files and across workspace packages (`@benchfleet/*` resolves to the
  // package's TypeScript sources through its package.json `exports`).
  {
    files: [...typescriptFiles, ...javascriptFiles],
    plugins: { 'import-x': importX },
    settings: {
      // Follow imports into TypeScript files too (the plugin's default is JavaScript only).
      'import-x/extensions': ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx', '.mts', '.cts'] },
      // npm packages cannot import ours back: not followed. (The workspace's own packages resolve
      // to their sources under libs/ and apps/, so they are; no-cycle's ignoreExternal would stop
      // at them, since they are imported by package name.)
      'import-x/ignore': ['node_modules'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['tsconfig.json', 'apps/dashboard/web/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: {
      'import-x/no-cycle': 'error',
    },
  },

  // TypeScript: parsed with types.
  {
    files: typescriptFiles,
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        projectService: {
          // Files no tsconfig.json includes: the dashboard's Vite config and the fixture a test
          // runs through vitest from outside the suite.
          allowDefaultProject: ['apps/dashboard/vite.config.ts', 'libs/testing/fixtures/*.ts'],
          defaultProject: 'tsconfig.json',
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },

  // JavaScript (bin shims, build and deploy scripts): plain Node ES modules.
  {
    files: javascriptFiles,
    ...js.configs.recommended,
    languageOptions: {
      sourceType: 'module',
      // Node's globals these scripts use.
      globals: Object.fromEntries(
        [
          'AbortSignal',
          'Buffer',
          'clearTimeout',
          'console',
          'fetch',
          'process',
          'setTimeout',
          'URL',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
  },
);
