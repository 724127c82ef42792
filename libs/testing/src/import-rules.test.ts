import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workspacePackages } from '../../../workspace-apps.mjs';

// The rules of the house, read from the source files' imports: shared rooms name no benchmark
// (they iterate the registry), and no lib reaches up into an app.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));

/** Every TypeScript file under `dir`, node_modules and build output left out. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter(
      (entry) =>
        entry.isFile() &&
        /\.(ts|tsx|mts)$/.test(entry.name) &&
        !/(^|\/)(node_modules|dist)(\/|$)/.test(relative(dir, entry.parentPath)),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The modules a file imports: `import … from`, `export … from`, `import '…'`, `import('…')`. */
function importsOf(source: string): string[] {
  return [
    ...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm),
    ...source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]!);
}

const packages = workspacePackages();
const packageOf = (dir: string) =>
  packages.find((candidate) => relative(REPO_DIR, candidate.dir) === dir)!;
/** The benchmarks' own libs: OSWorld's, WebShop's, and every example's. */
const benchmarkLibs = packages
  .filter(
    ({ name, dir }) =>
      /^@benchfleet\/(osworld|webshop)/.test(name) ||
      relative(REPO_DIR, dir).startsWith('examples/'),
  )
  .map(({ name }) => name);
const apps = packages.filter(({ dir }) => relative(REPO_DIR, dir).startsWith('apps/'));

const isTestFile = (file: string) =>
  /\.test\.tsx?$/.test(file) || file.split('/').includes('test-support');
const packageNameOf = (specifier: string) => specifier.split('/').slice(0, 2).join('/');

describe('imports', () => {
  it('reads every kind of import', () => {
    expect(
      importsOf(`import { a } from '@benchfleet/x';
import type { B } from "@benchfleet/y/sub";
export * from './z.js';
import {
  c,
} from '@benchfleet/multi';
import '@benchfleet/side-effect';
const lazy = () => import('@benchfleet/lazy');`).sort(),
    ).toEqual(
      [
        '@benchfleet/x',
        '@benchfleet/y/sub',
        './z.js',
        '@benchfleet/multi',
        '@benchfleet/side-effect',
        '@benchfleet/lazy',
      ].sort(),
    );
  });

  it('the scheduler, db, queue, core and runs import no benchmark lib (they iterate the registry)', () => {
    expect(benchmarkLibs).toEqual(
      expect.arrayContaining([
        '@benchfleet/osworld',
        '@benchfleet/webshop-benchmark',
        '@benchfleet/echo-benchmark',
      ]),
    );
    const rooms = ['apps/scheduler', 'libs/db', 'libs/queue', 'libs/core', 'libs/runs'];
    const found = rooms.flatMap((room) => {
      expect(packageOf(room), room).toBeDefined();
      return sourceFiles(join(REPO_DIR, room))
        .filter((file) => !isTestFile(file))
        .flatMap((file) =>
          importsOf(readFileSync(file, 'utf8'))
            .filter((specifier) => benchmarkLibs.includes(packageNameOf(specifier)))
            .map((specifier) => `${relative(REPO_DIR, file)} imports ${specifier}`),
        );
    });
    expect(found).toEqual([]);
  });

  it('no lib imports an app, by package or by path', () => {
    const appNames = apps.map(({ name }) => name);
    expect(appNames).toEqual(expect.arrayContaining(['@benchfleet/scheduler']));
    const found = sourceFiles(join(REPO_DIR, 'libs')).flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter(
          (specifier) =>
            appNames.includes(packageNameOf(specifier)) ||
            (specifier.startsWith('.') &&
              relative(REPO_DIR, join(file, '..', specifier)).startsWith('apps/')),
        )
        .map((specifier) => `${relative(REPO_DIR, file)} imports ${specifier}`),
    );
    expect(found).toEqual([]);
  });
});
