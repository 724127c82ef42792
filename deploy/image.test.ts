import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMetricsServer, WorkerMetrics } from '@benchfleet/runs';
import { workspaceApps, workspacePackages } from '../workspace-apps.mjs';
import { readDockerfile, stagesOf } from './dockerfile.js';
import { DEPLOY_DIR, REPO_DIR } from './k8s-manifests.js';

// deploy/Dockerfile as text, and what the image runs (its entrypoint and healthcheck scripts, the apps
// through the entrypoint) on this machine; image-run.test.ts builds the image and runs its apps.

const packageJson = JSON.parse(readFileSync(join(REPO_DIR, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  workspaces: string[];
};

describe('deploy/Dockerfile', () => {
  const instructions = readDockerfile(join(DEPLOY_DIR, 'Dockerfile'));
  const byStage = stagesOf(instructions);
  const runtime = byStage.get('runtime') ?? [];
  const last = (keyword: string) =>
    runtime.filter((instruction) => instruction.keyword === keyword).at(-1)?.args;
  const copiedTo = (source: string) =>
    runtime
      .find(
        (instruction) =>
          instruction.keyword === 'COPY' && instruction.args.split(' ')[0] === source,
      )
      ?.args.split(' ')
      .at(-1);

  it('builds on Node 20 slim, installs production dependencies only, and runs as an unprivileged user', () => {
    const nodeImage = instructions.find(
      (i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='),
    )?.args;
    expect(nodeImage).toMatch(/^NODE_IMAGE=node:20(\.\d+)*-bookworm-slim$/);
    expect([...byStage.keys()]).toEqual(['manifests', 'deps', 'runtime']);
    const install = byStage
      .get('deps')
      ?.find((i) => i.keyword === 'RUN' && i.args.includes('npm ci'))?.args;
    expect(install).toContain('npm ci --omit=dev');
    // The bin shims fall back to the TypeScript sources through tsx: it must survive --omit=dev.
    expect(packageJson.dependencies.tsx).toBeDefined();
    expect(packageJson.devDependencies.tsx).toBeUndefined();
    expect(last('USER')).toBe('1000:1000');
  });

  it('uses nothing the classic builder lacks (DOCKER_BUILDKIT=0, as Debian docker.io 20.10 builds)', () => {
    const text = readFileSync(join(DEPLOY_DIR, 'Dockerfile'), 'utf8');
    expect(text).not.toMatch(/^#\s*syntax=/m);
    expect(text).not.toMatch(/<<-?\s*['"]?[A-Z]+/);
    for (const instruction of instructions)
      expect(instruction.args, instruction.keyword).not.toMatch(
        /--(mount|checksum|chmod|link|parents|exclude)\b/,
      );
  });

  it('copies every workspace into the runtime stage, and the scripts the image runs', () => {
    const workspaceRoots = new Set(packageJson.workspaces.map((pattern) => pattern.split('/')[0]));
    for (const root of workspaceRoots) expect(copiedTo(`${root}/`), root).toBe(`./${root}/`);
    expect(copiedTo('deploy/docker-entrypoint.sh')).toBe('/usr/local/bin/benchfleet-entrypoint');
    expect(copiedTo('deploy/docker-healthcheck.mjs')).toBe(
      '/usr/local/lib/benchfleet-healthcheck.mjs',
    );
    // The reset command the compose file and the manifests give worker-osworld.
    expect(copiedTo('deploy/desktop-reset.mjs')).toBe(
      '/usr/local/lib/benchfleet-desktop-reset.mjs',
    );
    expect(last('ENTRYPOINT')).toBe('["/usr/local/bin/benchfleet-entrypoint"]');
    expect(last('HEALTHCHECK')).toMatch(
      /CMD \["node", "\/usr\/local\/lib\/benchfleet-healthcheck\.mjs"\]$/,
    );
    for (const instruction of runtime.filter(
      (i) => i.keyword === 'COPY' && !i.args.startsWith('--from'),
    )) {
      for (const source of instruction.args.split(' ').slice(0, -1))
        expect(existsSync(join(REPO_DIR, source)), source).toBe(true);
    }
  });

  it('keeps .git, node_modules and the compose secrets out of the build context, with one ignore file for both builders', () => {
    const forBuildKit = readFileSync(join(DEPLOY_DIR, 'Dockerfile.dockerignore'), 'utf8');
    expect(readFileSync(join(REPO_DIR, '.dockerignore'), 'utf8')).toBe(forBuildKit);
    const patterns = forBuildKit.split('\n').filter((line) => line && !line.startsWith('#'));
    expect(patterns).toEqual(
      expect.arrayContaining(['.git', '**/node_modules', 'deploy/*', '**/.env']),
    );
    expect(patterns.filter((pattern) => pattern.startsWith('!'))).toEqual([
      '!deploy/docker-entrypoint.sh',
      '!deploy/docker-healthcheck.mjs',
      '!deploy/desktop-reset.mjs',
    ]);
    for (const needed of [
      'apps',
      'libs',
      'migrations',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.base.json',
    ]) {
      expect(
        patterns.filter((pattern) => pattern === needed || pattern.startsWith(`${needed}/`)),
        needed,
      ).toEqual([]);
    }
  });
});

/** Static imports (`import … from`, `export … from`, `import '…'`) of a TypeScript or JavaScript file. */
function staticImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(
    /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm,
  )) {
    if (!match[2]) specifiers.push(match[3]!);
  }
  return specifiers;
}

/** `import('…')` with a literal: how commands load their modules when they run, and the bins tsx. */
function dynamicImports(source: string): string[] {
  return [...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]!);
}

function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** The file a workspace package's export points at, e.g. `@benchfleet/testing/test-database`. */
function workspaceFile(specifier: string): string {
  const name = packageNameOf(specifier);
  const subpath = `.${specifier.slice(name.length)}`;
  const found = workspacePackages().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no workspace package ${name}`);
  const target = found.manifest.exports?.[subpath];
  if (!target) throw new Error(`${name} does not export ${subpath}`);
  return join(found.dir, target);
}

describe('the production import graph', () => {
  it('needs only `dependencies`: what `npm ci --omit=dev` installs is enough to start every app', () => {
    const entries = workspaceApps().flatMap((app) => [app.bin, app.source]);
    const seen = new Set<string>();
    const external = new Map<string, string>();
    // Loaded only if installed (the demo's optional service provisioning): dev dependencies may be.
    const optional = new Set<string>();
    const queue = [...entries];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      const dynamic = dynamicImports(source);
      for (const specifier of [...staticImports(source), ...dynamic]) {
        if (isBuiltin(specifier)) continue;
        if (specifier.startsWith('.')) {
          const target = join(dirname(file), specifier);
          queue.push(existsSync(target) ? target : target.replace(/\.js$/, '.ts'));
        } else if (specifier.startsWith('@benchfleet/')) {
          queue.push(workspaceFile(specifier));
        } else {
          external.set(packageNameOf(specifier), relative(REPO_DIR, file));
          if (dynamic.includes(specifier) && file.includes('container-services'))
            optional.add(packageNameOf(specifier));
        }
      }
    }
    expect(seen.size).toBeGreaterThan(50);
    const missing = [...external]
      .filter(([name]) => !(name in packageJson.dependencies) && !optional.has(name))
      .map(([name, file]) => `${name} (imported by ${file})`);
    expect(missing).toEqual([]);
    expect([...external.keys()]).toEqual(
      expect.arrayContaining(['tsx', 'bullmq', 'pg', 'kysely', 'commander', 'zod']),
    );
  });
});

describe('the image entrypoint', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'benchfleet-entrypoint-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const entrypoint = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync('sh', [join(DEPLOY_DIR, 'docker-entrypoint.sh'), ...args], {
      env: { PATH: process.env.PATH, BENCHFLEET_HOME: REPO_DIR, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('starts the app its first argument names, with the remaining arguments', () => {
    const titles: Record<string, string> = {
      scheduler: 'benchfleet scheduler',
      'worker-webshop': 'runs WebShop episodes from the queue',
      'worker-osworld': 'runs OSWorld tasks on one Bytebot stack',
    };
    for (const { name } of workspaceApps()) {
      const result = entrypoint([name, '--help']);
      expect(result.status, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`Usage: ${name} `);
      if (titles[name]) expect(result.stdout).toContain(titles[name]);
    }
  });

  it('reads NAME_FILE secrets into NAME, runs other commands as given, and explains a missing command', () => {
    const file = join(scratch, 'database_url');
    writeFileSync(file, 'postgres://benchfleet:s3cret@db:5432/benchfleet\n');
    const result = entrypoint(
      ['sh', '-c', 'printf "%s|%s" "$DATABASE_URL" "${DATABASE_URL_FILE-unset}"'],
      { DATABASE_URL_FILE: file },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('postgres://benchfleet:s3cret@db:5432/benchfleet|unset');
    const usage = entrypoint([]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toBe(
      `usage: IMAGE ${workspaceApps()
        .map((app) => app.name)
        .join('|')} [arguments]\n`,
    );
    expect(usage.stderr).toMatch(/\bscheduler\|.*worker-webshop/);
  });
});

describe('the image healthcheck', () => {
  // Asynchronous: the server under test answers from this process's event loop.
  const healthcheck = (port: string | undefined) =>
    new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [join(DEPLOY_DIR, 'docker-healthcheck.mjs')], {
        env: {
          PATH: process.env.PATH,
          ...(port === undefined ? {} : { BENCHFLEET_METRICS_PORT: port }),
        },
        stdio: 'ignore',
      });
      child.once('error', reject);
      child.once('exit', (code) => resolve(code));
    });

  it("passes while a worker's /healthz answers 200, fails on 503 or silence, and passes without a metrics port", async () => {
    let healthy = true;
    const server = await startMetricsServer(new WorkerMetrics('webshop'), 0, () =>
      healthy ? null : 'shutting down',
    );
    try {
      expect(await healthcheck(String(server.port))).toBe(0);
      healthy = false;
      expect(await healthcheck(String(server.port))).toBe(1);
    } finally {
      await server.close();
    }
    expect(await healthcheck(String(server.port))).toBe(1);
    expect(await healthcheck(undefined)).toBe(0);
  });
});
