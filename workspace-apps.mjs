#!/usr/bin/env node
// The workspace's packages and its apps, read from the root package.json's `workspaces` and each
// package's package.json: an app is a package whose package.json says `"benchfleet": { "app":
// "cli" | "worker" }`. The build (build-bins.mjs), the image's entrypoint, the deploy manifests and
// their tests take the list of apps from here: adding a worker app is adding its folder.
//
//   node workspace-apps.mjs                 the apps' names, one a line
//   node workspace-apps.mjs --kind worker   the worker apps' names
//   node workspace-apps.mjs --bin NAME      the path of app NAME's bin, else of another workspace
//                                           package's bin NAME (the dashboard's); exit 1: none
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));

/** The folders a workspace pattern names: `apps/*`, `examples/*\/*`, `migrations`. */
function expand(root, pattern) {
  let dirs = [root];
  for (const part of pattern.split('/')) {
    dirs = dirs.flatMap((dir) =>
      part === '*'
        ? readdirSync(dir, { withFileTypes: true })
            .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
            .map((entry) => join(dir, entry.name))
            .sort()
        : [join(dir, part)],
    );
  }
  return dirs.filter((dir) => existsSync(join(dir, 'package.json')));
}

/** Every workspace package, in the order of the root package.json's patterns: `{ name, dir, manifest }`. */
export function workspacePackages(root = ROOT) {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return workspaces.flatMap((pattern) =>
    expand(root, pattern).map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return { name: manifest.name, dir, manifest };
    }),
  );
}

/**
 * The apps: `{ name, kind, dir, bin, source, deploy }`, `name` being the app's bin (`worker-foo`),
 * `source` its entry (`src/main.ts`) and `deploy` what its package.json says of its place in the
 * deploy manifests (absent: it has hand-written ones).
 */
export function workspaceApps(root = ROOT) {
  return workspacePackages(root).flatMap(({ dir, manifest }) => {
    const kind = manifest.benchfleet?.app;
    if (kind !== 'cli' && kind !== 'worker') return [];
    const [[name, bin] = []] = Object.entries(manifest.bin ?? {});
    if (!name) throw new Error(`${manifest.name}: an app needs a bin in its package.json`);
    return [
      {
        name,
        kind,
        dir,
        bin: join(dir, bin),
        source: join(dir, 'src', 'main.ts'),
        ...(manifest.benchfleet.deploy ? { deploy: manifest.benchfleet.deploy } : {}),
      },
    ];
  });
}

/** The app of that name; throws listing the apps when there is none. */
export function workspaceApp(name, root = ROOT) {
  const apps = workspaceApps(root);
  const found = apps.find((app) => app.name === name);
  if (!found)
    throw new Error(
      `no app ${name} in the workspace (apps: ${apps.map((a) => a.name).join(', ')})`,
    );
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (flag) => {
    const at = args.indexOf(flag);
    return at === -1 ? undefined : args[at + 1];
  };
  const bin = option('--bin');
  const kind = option('--kind');
  if (bin !== undefined) {
    const app = workspaceApps().find((candidate) => candidate.name === bin)?.bin;
    const other = workspacePackages()
      .filter(({ manifest }) => typeof manifest.bin?.[bin] === 'string')
      .map(({ dir, manifest }) => join(dir, manifest.bin[bin]))[0];
    const found = app ?? other;
    if (!found) process.exit(1);
    process.stdout.write(`${found}\n`);
  } else {
    for (const app of workspaceApps())
      if (kind === undefined || app.kind === kind) process.stdout.write(`${app.name}\n`);
  }
}
