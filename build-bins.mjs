#!/usr/bin/env node
// The apps' CLIs as compiled JavaScript: each app's sources and the workspace libs it uses are
// bundled by esbuild into apps/<app>/dist/<app>.js and its chunks (npm packages stay imports). `npm ci` builds
// them (root `prepare`), and so does the test setup, so tests exercise what users run.
//
// `launch` is what the bin shims call: it runs the bundle unless a source file it was built from
// changed since (or it is missing), in which case it runs the TypeScript sources through tsx: a
// stale bundle is never what runs.
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));
export const APPS = ['scheduler', 'worker-webshop', 'worker-osworld'];

const bundlePath = (app) => join(ROOT, 'apps', app, 'dist', `${app}.js`);
const manifestPath = (app) => join(ROOT, 'apps', app, 'dist', 'build.json');

/** Bundles every app (or those named); returns how long it took in ms. */
export async function buildBins(apps = APPS) {
  const { build } = await import('esbuild');
  const started = Date.now();
  // Workspace packages (@benchfleet/*) point at TypeScript sources: bundle them; leave npm packages as imports.
  const npmPackagesExternal = {
    name: 'npm-packages-external',
    setup(context) {
      context.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@benchfleet/') ? undefined : { path: args.path, external: true }));
    },
  };
  await Promise.all(
    apps.map(async (app) => {
      const outdir = join(ROOT, 'apps', app, 'dist');
      rmSync(outdir, { recursive: true, force: true });
      const result = await build({
        entryPoints: { [app]: join(ROOT, 'apps', app, 'src', 'main.ts') },
        outdir,
        // Modules a command imports when it runs go to chunks of their own, loaded only then.
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        sourcemap: true,
        metafile: true,
        logLevel: 'warning',
        plugins: [npmPackagesExternal],
      });
      const inputs = Object.keys(result.metafile.inputs).map((input) => relative(ROOT, join(process.cwd(), input)));
      writeFileSync(manifestPath(app), `${JSON.stringify({ builtAt: started, inputs }, null, 1)}\n`);
    }),
  );
  return Date.now() - started;
}

/** True when the app's bundle exists and no source it was built from changed after the build began. */
export function bundleIsCurrent(app) {
  try {
    const { builtAt, inputs } = JSON.parse(readFileSync(manifestPath(app), 'utf8'));
    statSync(bundlePath(app));
    return inputs.every((input) => statSync(join(ROOT, input)).mtimeMs < builtAt);
  } catch {
    return false;
  }
}

/** Runs an app's CLI: the bundle when current, else its TypeScript sources through tsx. */
export async function launch(app) {
  if (process.env.BENCHFLEET_RUN_SOURCES !== '1' && bundleIsCurrent(app)) {
    await import(pathToFileURL(bundlePath(app)).href);
    return;
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(ROOT, 'apps', app, 'src', 'main.ts')).href);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ms = await buildBins(process.argv.length > 2 ? process.argv.slice(2) : APPS);
  process.stderr.write(`built ${APPS.map((app) => `apps/${app}/dist/${app}.js`).join(', ')} in ${ms} ms\n`);
}
