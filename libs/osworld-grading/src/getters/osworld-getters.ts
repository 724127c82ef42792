import { copyFile, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cacheDirPath } from '../cache-dir/cache-dir.js';
import type { UrlFileSource } from '../downloads/download-cache.js';
import { DownloadFailedError } from '../grading/grading-errors.js';
import { pyGetItemOfJson, pyIter, pyStrip } from '../python/builtins.js';
import { PythonException } from '../python/exceptions.js';
import { pyOsError, pyPathExists } from '../python/os.js';
import { pyTruthy, pyTypeName, toPy } from '../python/values.js';
import type { OsworldVmServer } from '../vm-server/osworld-vm-server.js';

/** The getter types the phase-1 tasks use, all ported (reference §4). */
export const SUPPORTED_GETTERS = [
  'vm_file',
  'cloud_file',
  'cache_file',
  'rule',
  'vm_command_line',
  'vm_command_error',
  'list_directory',
  'vscode_config',
] as const;
export type SupportedGetter = (typeof SUPPORTED_GETTERS)[number];

export function isSupportedGetter(type: string): type is SupportedGetter {
  return (SUPPORTED_GETTERS as readonly string[]).includes(type);
}

/** Upstream's `env` as the getters see it. */
export interface GetterEnvironment {
  readonly vm: OsworldVmServer;
  /** Where `cloud_file` downloads golds from. */
  readonly files: UrlFileSource;
  /** The task's cache dir (absolute). */
  readonly cacheDir: string;
  readonly signal?: AbortSignal;
  /** Collects the files the getters write (relative to the cache dir): the end state to keep. */
  readonly written?: Set<string>;
}

/**
 * `get_<type>(env, config)`. Returns what upstream returns (cache paths are absolute paths in the
 * cache dir); throws PythonException where upstream raises (AssertionError, HTTPError, KeyError,
 * FileNotFoundError…) and GradingInfraError where the desktop or a download host did not answer.
 */
export async function runGetter(
  type: string,
  config: unknown,
  environment: GetterEnvironment,
): Promise<unknown> {
  const settings = configOf(config);
  switch (type) {
    case 'vm_file':
      return vmFile(settings, environment);
    case 'cloud_file':
      return cloudFile(settings, environment);
    case 'cache_file':
      return cacheFile(settings, environment);
    case 'rule':
      return key(settings, 'rules');
    case 'vm_command_line':
    case 'vm_command_error':
      return vmCommand(type, settings, environment);
    case 'list_directory':
      return environment.vm.listDirectory(String(key(settings, 'path')), signalOf(environment));
    case 'vscode_config':
      return vscodeConfig(settings, environment);
    default:
      throw new PythonException(
        'AttributeError',
        `module 'desktop_env.evaluators.getters' has no attribute 'get_${type}'`,
      );
  }
}

/** The (path, dest) pairs of a file getter: `multi` by truthiness (the string "false" is true). */
function pathPairs(settings: Record<string, unknown>): {
  pairs: [unknown, unknown][];
  gives: Set<unknown>;
} {
  if (!pyTruthy(toPy(settings['multi'] ?? false))) {
    if (pyTruthy(toPy(settings['time_suffix'] ?? false)))
      throw new PythonException('NotImplementedError', 'vm_file time_suffix is not ported');
    return { pairs: [[key(settings, 'path'), key(settings, 'dest')]], gives: givesOf(settings) };
  }
  const paths = pyIter(toPy(key(settings, 'path')));
  const dests = pyIter(toPy(key(settings, 'dest')));
  // zip() stops at the shorter list.
  const pairs = paths
    .slice(0, Math.min(paths.length, dests.length))
    .map((path, index): [unknown, unknown] => [path, dests[index]]);
  return { pairs, gives: givesOf(settings) };
}

function givesOf(settings: Record<string, unknown>): Set<unknown> {
  return new Set(pyIter(toPy(settings['gives'] ?? [0])));
}

/** `cache_paths[0] if len(cache_paths) == 1 else cache_paths`. */
function shapeOf(paths: (string | null)[]): string | null | (string | null)[] {
  return paths.length === 1 ? (paths[0] ?? null) : paths;
}

async function vmFile(
  settings: Record<string, unknown>,
  environment: GetterEnvironment,
): Promise<unknown> {
  const { pairs, gives } = pathPairs(settings);
  const cachePaths: (string | null)[] = [];
  for (const [index, [path, dest]] of pairs.entries()) {
    const target = cacheDirPath(environment.cacheDir, dest);
    const bytes = await environment.vm.getFile(String(path), signalOf(environment));
    if (bytes === null) {
      if (gives.has(index)) cachePaths.push(null);
      continue;
    }
    if (gives.has(index)) cachePaths.push(target);
    await writeInCache(environment, target, bytes);
  }
  return shapeOf(cachePaths);
}

async function cloudFile(
  settings: Record<string, unknown>,
  environment: GetterEnvironment,
): Promise<unknown> {
  const { pairs, gives } = pathPairs(settings);
  const cachePaths: (string | null)[] = [];
  for (const [index, [url, dest]] of pairs.entries()) {
    const target = cacheDirPath(environment.cacheDir, dest);
    if (gives.has(index)) cachePaths.push(target);
    // Cached by `dest`, not by URL: an existing file of that name is used as the gold (quirk kept).
    if (await pyPathExists(target)) continue;
    let downloaded;
    try {
      downloaded = await environment.files.fetch(String(url), signalOf(environment));
    } catch (error) {
      // An HTTP error answer is upstream's `raise_for_status()`; a host that does not answer, or
      // answers 5xx, is infra (retried), never a grade.
      if (
        error instanceof DownloadFailedError &&
        error.status !== null &&
        error.status >= 400 &&
        error.status < 500
      )
        throw new PythonException(
          'HTTPError',
          `${error.status} Client Error for url: ${String(url)}`,
        );
      throw error;
    }
    await writeInCache(environment, target, { copyOf: downloaded.path });
  }
  return shapeOf(cachePaths);
}

async function cacheFile(
  settings: Record<string, unknown>,
  environment: GetterEnvironment,
): Promise<string> {
  const path = cacheDirPath(environment.cacheDir, key(settings, 'path'));
  if (!(await pyPathExists(path))) throw new PythonException('AssertionError', '');
  return path;
}

async function vmCommand(
  type: 'vm_command_line' | 'vm_command_error',
  settings: Record<string, unknown>,
  environment: GetterEnvironment,
): Promise<string | null> {
  const command = key(settings, 'command');
  const shell = settings['shell'] ?? false;
  const answer = await environment.vm.execute(command, shell, {
    route: '/execute',
    ...signalOf(environment),
  });
  if (!answer.ok) return null;
  return type === 'vm_command_line' ? answer.output : answer.error;
}

const WORKSPACE_SCAN =
  'find /home/user/.config/Code/User/workspaceStorage -name workspace.json -exec cat {} \\;';

/**
 * Replays the eval extension's command in VS Code (Ctrl+Shift+P, its name, Enter) and fetches the
 * file it writes; without that file, the workspace.json files VS Code keeps stand in (reference §4).
 */
async function vscodeConfig(
  settings: Record<string, unknown>,
  environment: GetterEnvironment,
): Promise<unknown> {
  const signal = signalOf(environment);
  const platformAnswer = await environment.vm.executePython(
    'import platform; print(platform.system())',
    signal,
  );
  if (platformAnswer === null)
    throw new PythonException('TypeError', "'NoneType' object is not subscriptable");
  const osType = pyStrip(String(platformAnswer['output'] ?? ''));
  const extensionCommand = key(settings, 'vscode_extension_command');
  await environment.vm.activateWindow(
    { window_name: 'Visual Studio Code', strict: false, by_class: false },
    signal,
  );
  await sleep(500, undefined, signal);
  const modifier = osType === 'MacOS' ? 'command' : 'ctrl';
  await environment.vm.executePython(
    `import pyautogui; pyautogui.hotkey('${modifier}', 'shift', 'p');`,
    signal,
  );
  await environment.vm.executePython(
    `import pyautogui; pyautogui.typewrite('${String(extensionCommand)}');`,
    signal,
  );
  await environment.vm.executePython("import pyautogui; pyautogui.press('enter');", signal);
  await sleep(1_000, undefined, signal);
  const fetched = await vmFile(
    { path: key(settings, 'path'), dest: key(settings, 'dest') },
    environment,
  );
  if (typeof fetched === 'string') return fetched;
  const scan = await vmCommand(
    'vm_command_line',
    { command: WORKSPACE_SCAN, shell: true },
    environment,
  );
  if (!scan) return '';
  const target = cacheDirPath(environment.cacheDir, key(settings, 'dest'));
  await writeInCache(environment, target, Buffer.from(scan, 'utf8'));
  return target;
}

/** Writes `target` in the cache dir (bytes, or a copy of a downloaded file) and records it as written. */
async function writeInCache(
  environment: GetterEnvironment,
  target: string,
  content: Buffer | { readonly copyOf: string },
): Promise<void> {
  try {
    if (Buffer.isBuffer(content)) await writeFile(target, content);
    else await copyFile(content.copyOf, target);
  } catch (error) {
    throw pyOsError(error, target);
  }
  environment.written?.add(relative(environment.cacheDir, target));
}

function configOf(config: unknown): Record<string, unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new PythonException(
      'TypeError',
      `'${pyTypeName(toPy(config))}' object is not subscriptable`,
    );
  return config as Record<string, unknown>;
}

/** `config[name]`. */
const key = (settings: Record<string, unknown>, name: string): unknown =>
  pyGetItemOfJson(settings, name);

function signalOf(environment: { signal?: AbortSignal }): { signal?: AbortSignal } {
  return environment.signal ? { signal: environment.signal } : {};
}
