import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { echoBenchmark } from '@benchfleet/echo-benchmark';
import { BUNDLED_MODULES_FILE, ensureWebBuild, WEB_DIST_DIR } from './web-build.js';

// The browser bundle takes no server code (no lib, no server module, no server package: types
// only cross over), and neither the browser nor the server names a benchmark: all of that comes
// from the registry's descriptors at run time.

const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
const SERVER_PACKAGES = [
  'hono',
  '@hono',
  '@bull-board',
  'bullmq',
  'ioredis',
  'pg',
  'kysely',
  'pino',
];

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|tsx)$/.test(entry.name))
    .filter((entry) => !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the web bundle', () => {
  it('is built from the browser code and the shared modules only', async () => {
    await ensureWebBuild();
    const modules = JSON.parse(
      await readFile(join(WEB_DIST_DIR, BUNDLED_MODULES_FILE), 'utf8'),
    ) as string[];
    expect(modules).toContain('apps/dashboard/web/src/step-table.tsx');
    expect(modules).toContain('apps/dashboard/shared/trajectory-frame.ts');
    const ours = modules.filter((id) => !id.startsWith('node_modules/'));
    expect(
      ours.filter(
        (id) => !id.startsWith('apps/dashboard/web/') && !id.startsWith('apps/dashboard/shared/'),
      ),
    ).toEqual([]);
    const packages = modules
      .filter((id) => id.startsWith('node_modules/'))
      .map((id) =>
        id
          .split('/')
          .slice(1, id.split('/')[1]?.startsWith('@') ? 3 : 2)
          .join('/'),
      );
    expect(
      [...new Set(packages)].filter((name) =>
        SERVER_PACKAGES.some((server) => name === server || name.startsWith(`${server}/`)),
      ),
    ).toEqual([]);
  });
});

describe('the dashboard', () => {
  it('names no benchmark: its server, browser and shared code ask the registry', async () => {
    const names = [...benchmarks.all, echoBenchmark].map((benchmark) => benchmark.name);
    const files = (
      await Promise.all(['src', 'web', 'shared'].map((dir) => sourcesUnder(join(APP_DIR, dir))))
    ).flat();
    expect(files.length).toBeGreaterThan(20);
    const naming: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      for (const name of names)
        if (new RegExp(`\\b${name}\\b`, 'i').test(text))
          naming.push(`${relative(APP_DIR, file)} names ${name}`);
    }
    expect(naming).toEqual([]);
  });
});
