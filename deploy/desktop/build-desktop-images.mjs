// Builds the desktop image of graded OSWorld stacks (deploy/desktop/Dockerfile), and Bytebot's
// desktop under it when the published one cannot be pulled (deploy/desktop/bytebot-desktop/):
//
//   node deploy/desktop/build-desktop-images.mjs [--bytebot-desktop auto|registry|local]
//        [--bytebot-image NAME] [--tag NAME] [--upstream DIR] [--work DIR] [--force] [--no-cache]
//        [--json]
//
// Upstream sources (Bytebot, OSWorld's VM server, pyautogui and its dependencies) come from the
// pinned tarballs in --upstream (BENCHFLEET_UPSTREAM_DIR; default ../shared/upstream beside the
// checkout), each checked against its sha256, or else from GitHub at the same pinned commits;
// either way every staged tree is checked against its pinned digest. Contexts are staged under
// --work (default .benchfleet/desktop-build). An image whose org.benchfleet.inputs-digest label
// matches its staged inputs is reused (--force builds anyway, --no-cache without Docker's layer
// cache either). Built locally, Bytebot's desktop is benchfleet-bytebot-desktop:<the tag's tag>.
// The desktop image gets the label
// org.benchfleet.desktop (what it has, deploy/desktop/README.md). Progress on stderr; the image
// name (or with --json a summary) on stdout. Exit 2 on bad arguments or a missing prerequisite,
// 1 when a fetch or build fails, with one line on stderr.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, stat, writeFile, rename } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const REGISTRY_BYTEBOT_IMAGE = 'ghcr.io/bytebot-ai/bytebot-desktop:edge';
const LOCAL_BYTEBOT_REPOSITORY = 'benchfleet-bytebot-desktop';
const DIGEST_LABEL = 'org.benchfleet.inputs-digest';
const DESKTOP_LABEL = 'org.benchfleet.desktop';
const PULL_TIMEOUT_MS = 60_000;
const FETCH_TIMEOUT_MS = 120_000;

// The pinned sources and the digests of the trees staged from each (upstream-sources.json).
const { sources: SOURCES } = JSON.parse(
  await readFile(join(HERE, 'upstream-sources.json'), 'utf8'),
);

const USAGE =
  'usage: build-desktop-images.mjs [--bytebot-desktop auto|registry|local] [--bytebot-image NAME] ' +
  '[--tag NAME] [--upstream DIR] [--work DIR] [--force] [--no-cache] [--json]';

class BadInput extends Error {}
class BuildFailure extends Error {}

const say = (line) => process.stderr.write(`[desktop-images] ${line}\n`);

function parseArgs(argv) {
  const options = {
    route: 'auto',
    bytebotImage: REGISTRY_BYTEBOT_IMAGE,
    tag: 'benchfleet-desktop:local',
    upstream: process.env.BENCHFLEET_UPSTREAM_DIR || resolve(ROOT, '../shared/upstream'),
    work: resolve(ROOT, '.benchfleet/desktop-build'),
    force: false,
    noCache: false,
    json: false,
  };
  const valued = {
    '--bytebot-desktop': 'route',
    '--bytebot-image': 'bytebotImage',
    '--tag': 'tag',
    '--upstream': 'upstream',
    '--work': 'work',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--force') options.force = true;
    else if (arg === '--no-cache') options.force = options.noCache = true;
    else if (arg === '--json') options.json = true;
    else if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (arg in valued) {
      const value = argv[++i];
      if (value === undefined || value.startsWith('--'))
        throw new BadInput(`${arg} needs a value (${USAGE})`);
      options[valued[arg]] = value;
    } else throw new BadInput(`unknown argument '${arg}' (${USAGE})`);
  }
  if (!['auto', 'registry', 'local'].includes(options.route))
    throw new BadInput(
      `--bytebot-desktop ${options.route}: give auto (pull, else build), registry or local`,
    );
  if (!/^[a-z0-9][a-z0-9._/-]*(:[\w.-]+)?$/.test(options.tag))
    throw new BadInput(`--tag ${options.tag}: not an image name (e.g. benchfleet-desktop:local)`);
  // The local Bytebot desktop shares the desktop's tag: benchfleet-desktop:X is built on
  // benchfleet-bytebot-desktop:X.
  options.localBytebotImage = `${LOCAL_BYTEBOT_REPOSITORY}:${options.tag.split(':')[1] ?? 'latest'}`;
  options.upstream = resolve(options.upstream);
  options.work = resolve(options.work);
  return options;
}

// --- processes -----------------------------------------------------------------------------------

/** Runs a command; its output to `log` (a file) or kept; rejects with BuildFailure on non-zero exit. */
function run(command, args, { input, onLine, timeoutMs, logFile } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let pending = '';
    const onData = (chunk) => {
      const text = chunk.toString();
      output += text;
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
      if (!onLine) return;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = timeoutMs ? setTimeout(() => child.kill('SIGTERM'), timeoutMs) : undefined;
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new BuildFailure(`${command}: ${error.message}`));
    });
    child.once('close', async (code, signal) => {
      clearTimeout(timer);
      if (logFile) await writeFile(logFile, output).catch(() => {});
      if (code === 0) resolvePromise(output);
      else {
        const tail = output.trim().split('\n').slice(-3).join(' | ');
        reject(
          new BuildFailure(
            `${command} ${args.slice(0, 2).join(' ')} failed (${signal ?? `exit ${code}`})` +
              `${logFile ? `, log ${logFile}` : ''}: ${tail}`,
          ),
        );
      }
    });
    child.stdin.end(input ?? '');
  });
}

const docker = (args, options) => run('docker', args, options);

async function imageInfo(name) {
  try {
    const [info] = JSON.parse(await docker(['image', 'inspect', name]));
    return { id: info.Id, labels: info.Config?.Labels ?? {} };
  } catch {
    return null;
  }
}

// --- sources -------------------------------------------------------------------------------------

async function sha256File(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

async function filesUnder(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath ?? entry.path, entry.name));
  }
  return found;
}

/** sha256 over the sorted lines "relative path NUL sha256" of every file under `dir`. */
async function treeDigest(dir, extra = '') {
  const lines = [];
  for (const file of await filesUnder(dir))
    lines.push(`${relative(dir, file)}\0${await sha256File(file)}\n`);
  return createHash('sha256')
    .update(lines.sort().join('') + extra)
    .digest('hex');
}

async function download(url, to) {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }).catch(
    (error) => {
      throw new BuildFailure(`GET ${url}: ${error.cause?.message ?? error.message}`);
    },
  );
  if (!response.ok) throw new BuildFailure(`GET ${url}: HTTP ${response.status}`);
  await writeFile(to, Buffer.from(await response.arrayBuffer()));
}

/** The source's unpacked top directory under work/src: from the tarball, else from GitHub. */
async function unpackSource(name, source, options) {
  const dir = join(options.work, 'src', name);
  const marker = join(dir, '.benchfleet-unpacked');
  if (existsSync(marker)) return join(dir, (await readFile(marker, 'utf8')).trim());
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  let archive = join(options.upstream, source.file);
  if (existsSync(archive)) {
    const actual = await sha256File(archive);
    if (actual !== source.sha256)
      throw new BuildFailure(`${archive}: sha256 ${actual}, pinned ${source.sha256}`);
  } else {
    const url = `https://codeload.github.com/${source.github}/tar.gz/${source.commit}`;
    say(`${name}: no ${archive}; fetching ${source.github}@${source.commit.slice(0, 7)}`);
    archive = join(dir, `${name}.tar.gz`);
    await download(url, archive);
  }
  await run('tar', ['-xzf', archive, '-C', dir]);
  const top = (await readdir(dir, { withFileTypes: true })).find((entry) => entry.isDirectory());
  if (!top) throw new BuildFailure(`${archive} holds no directory`);
  await writeFile(marker, top.name);
  return join(dir, top.name);
}

/** Copies a pinned tree of a source to `to`, after checking its digest. */
async function stageTree(name, source, top, path, to) {
  const from = join(top, path);
  const digest = await treeDigest(from);
  if (digest !== source.trees[path])
    throw new BuildFailure(
      `${name} ${path}: tree digest ${digest}, pinned ${source.trees[path]} (not ${source.github}@${source.commit.slice(0, 7)})`,
    );
  await cp(from, to, { recursive: true });
}

async function stageFile(name, source, top, path, to) {
  const from = join(top, path);
  const digest = await sha256File(from);
  if (digest !== source.files[path])
    throw new BuildFailure(`${name} ${path}: sha256 ${digest}, pinned ${source.files[path]}`);
  await mkdir(dirname(to), { recursive: true });
  await cp(from, to);
}

/** A fresh context directory holding `ours` (files of this directory) and whatever `fill` adds. */
async function stageContext(options, name, ours, fill) {
  const dir = join(options.work, 'context', name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const [from, to] of ours) await cp(join(HERE, from), join(dir, to), { recursive: true });
  await fill(dir);
  return dir;
}

/** The host's CA bundle (BENCHFLEET_HOST_CA_BUNDLE), for npm inside the build; empty when none. */
async function hostCertificates() {
  const bundle = process.env.BENCHFLEET_HOST_CA_BUNDLE ?? '/etc/ssl/certs/ca-certificates.crt';
  return bundle ? readFile(bundle).catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
}

// --- images --------------------------------------------------------------------------------------

/** docker build with progress lines; the full log beside the contexts. */
async function build(options, tag, context, buildArgs, labels) {
  const args = ['build', '-t', tag, ...(options.noCache ? ['--no-cache'] : [])];
  for (const [key, value] of Object.entries(buildArgs)) args.push('--build-arg', `${key}=${value}`);
  for (const [key, value] of Object.entries(labels)) args.push('--label', `${key}=${value}`);
  args.push(context);
  const logFile = join(options.work, `${tag.replace(/[^\w.-]+/g, '_')}.log`);
  const started = Date.now();
  await docker(args, {
    logFile,
    onLine: (line) => {
      if (/^Step \d+\/\d+ : /.test(line)) say(`${tag}: ${line.slice(0, 110)}`);
    },
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  say(`${tag}: built in ${seconds} s (log ${relative(process.cwd(), logFile)})`);
  return seconds;
}

async function pull(image) {
  try {
    await docker(['pull', '-q', image], { timeoutMs: PULL_TIMEOUT_MS });
    return true;
  } catch {
    return false;
  }
}

/** Bytebot's desktop: the published image, else built by upstream's recipe on Debian. */
async function bytebotDesktop(options, summary) {
  if (options.route !== 'local') {
    if ((await imageInfo(options.bytebotImage)) || (await pull(options.bytebotImage))) {
      say(`${options.bytebotImage}: present`);
      return options.bytebotImage;
    }
    if (options.route === 'registry')
      throw new BuildFailure(
        `${options.bytebotImage} cannot be pulled (--bytebot-desktop registry)`,
      );
    say(
      `${options.bytebotImage} cannot be pulled: building ${options.localBytebotImage} by upstream's recipe`,
    );
  }
  await run('bash', [join(ROOT, 'deploy/base-images/build-local-bases.sh'), 'debian', 'node'], {
    onLine: (line) => line.trim() && process.stderr.write(`${line}\n`),
  });
  const top = await unpackSource('bytebot', SOURCES.bytebot, options);
  const context = await stageContext(
    options,
    'bytebot-desktop',
    [
      ['bytebot-desktop/Dockerfile', 'Dockerfile'],
      ['bytebot-desktop/adaptations.json', 'adaptations.json'],
    ],
    async (dir) => {
      await writeFile(join(dir, 'host-ca-certificates.crt'), await hostCertificates());
      await stageTree('bytebot', SOURCES.bytebot, top, 'packages/shared', join(dir, 'shared'));
      await stageTree('bytebot', SOURCES.bytebot, top, 'packages/bytebotd', join(dir, 'bytebotd'));
    },
  );
  const bases = await Promise.all(
    ['debian:bookworm', 'node:20-bookworm-slim'].map(async (name) => (await imageInfo(name))?.id),
  );
  const digest = await treeDigest(context, bases.join('\n'));
  await reuseOrBuild(options, summary, options.localBytebotImage, digest, () =>
    build(options, options.localBytebotImage, context, {}, { [DIGEST_LABEL]: digest }),
  );
  return options.localBytebotImage;
}

async function reuseOrBuild(options, summary, tag, digest, buildIt) {
  const present = await imageInfo(tag);
  if (!options.force && present?.labels[DIGEST_LABEL] === digest) {
    say(`${tag}: up to date (inputs ${digest.slice(0, 12)})`);
    summary.reused.push(tag);
    return false;
  }
  summary.built.push({ image: tag, seconds: await buildIt() });
  return true;
}

/** The OSWorld layer on top, then the label made from what the built image holds. */
async function desktop(options, summary, bytebotImage) {
  const python = ['pytweening', 'pyscreeze', 'mouseinfo', 'pyautogui'];
  const tops = {};
  for (const name of ['osworld', ...python])
    tops[name] = await unpackSource(name, SOURCES[name], options);
  const context = await stageContext(
    options,
    'desktop',
    [
      'Dockerfile',
      'supervisord.conf',
      'benchfleet-desktop-wait',
      'google-chrome',
      'desktop-manifest.py',
    ].map((file) => [file, file]),
    async (dir) => {
      for (const path of Object.keys(SOURCES.osworld.files))
        await stageFile(
          'osworld',
          SOURCES.osworld,
          tops.osworld,
          path,
          join(dir, 'upstream/osworld-server', path.split('/').pop()),
        );
      for (const name of python)
        await stageTree(name, SOURCES[name], tops[name], '.', join(dir, 'upstream/python', name));
    },
  );
  const base = await imageInfo(bytebotImage);
  const digest = await treeDigest(context, `${bytebotImage}\n${base?.id}`);
  const unlabelled = `${options.tag}-unlabelled`;
  await reuseOrBuild(options, summary, options.tag, digest, async () => {
    const seconds = await build(
      options,
      unlabelled,
      context,
      { BYTEBOT_DESKTOP_IMAGE: bytebotImage },
      {},
    );
    const manifest = (
      await docker([
        'run',
        '--rm',
        '--entrypoint',
        'cat',
        unlabelled,
        '/usr/share/benchfleet-desktop.json',
      ])
    ).trim();
    JSON.parse(manifest);
    await docker(
      [
        'build',
        '-t',
        options.tag,
        '--label',
        `${DESKTOP_LABEL}=${manifest}`,
        '--label',
        `${DIGEST_LABEL}=${digest}`,
        '-',
      ],
      { input: `FROM ${unlabelled}\n` },
    );
    await docker(['image', 'rm', unlabelled]);
    return seconds;
  });
}

async function withLock(work, body) {
  const lock = join(work, '.lock');
  await mkdir(work, { recursive: true });
  let told = false;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const holder = Number((await readFile(join(lock, 'pid'), 'utf8').catch(() => '')).trim());
      let alive = false;
      try {
        if (holder > 0) alive = process.kill(holder, 0);
      } catch {
        alive = false;
      }
      const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? Date.now());
      if (!alive && age > 5_000) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) say(`waiting for another build (pid ${holder || '?'}) to finish`);
      told = true;
      await new Promise((done) => setTimeout(done, 1_000));
    }
  }
  const pidFile = join(lock, 'pid');
  await writeFile(`${pidFile}.tmp`, String(process.pid));
  await rename(`${pidFile}.tmp`, pidFile);
  try {
    return await body();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  try {
    await docker(['info'], { timeoutMs: 20_000 });
  } catch {
    throw new BadInput(
      'no Docker engine answers: start dockerd (deploy/base-images/ensure-docker-engine.sh) or set DOCKER_HOST',
    );
  }
  const started = Date.now();
  const summary = { image: options.tag, bytebotDesktopImage: null, built: [], reused: [] };
  await withLock(options.work, async () => {
    summary.bytebotDesktopImage = await bytebotDesktop(options, summary);
    await desktop(options, summary, summary.bytebotDesktopImage);
  });
  summary.seconds = Math.round((Date.now() - started) / 1000);
  summary.id = (await imageInfo(options.tag))?.id ?? null;
  process.stdout.write(options.json ? `${JSON.stringify(summary)}\n` : `${options.tag}\n`);
}

main().catch((error) => {
  process.stderr.write(`build-desktop-images: ${error.message}\n`);
  if (process.env.BENCHFLEET_DEBUG === '1') process.stderr.write(`${error.stack}\n`);
  process.exit(error instanceof BadInput ? 2 : 1);
});
