import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '@benchfleet/core';
import { z } from 'zod';
import {
  osworldTaskListSchema,
  osworldTaskSchema,
  type OsworldDataset,
  type OsworldTask,
  type OsworldTaskList,
} from './osworld-dataset.js';
import { formatPythonJson, formatPythonUtcTimestamp } from './python-compatible-format.js';

/** A file of the OSWorld data or an extracted dataset cannot be read or has the wrong shape. */
export class OsworldDatasetError extends UsageError {
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

export class UnknownOsworldDomainError extends UsageError {
  constructor(
    readonly unknownDomains: readonly string[],
    readonly availableDomains: readonly string[],
    testAllFile: string,
  ) {
    super(
      `Domain ${unknownDomains.map((domain) => `'${domain}'`).join(', ')} not found in ${testAllFile}. ` +
        `Available: ${availableDomains.join(', ')}`,
    );
  }
}

export interface ExtractOsworldDatasetOptions {
  /** An OSWorld checkout, or its `evaluation_examples` directory. */
  osworldDir: string;
  /**
   * The task list (default `test_all.json`). A relative path that does not exist from the working
   * directory is looked up inside `evaluation_examples`, so `test_small.json` works as is.
   */
  testAllFile?: string;
  /** Only these domains (default: all in the task list). */
  domains?: readonly string[];
  now?: () => Date;
}

export interface OsworldDatasetExtraction {
  dataset: OsworldDataset;
  /** Problems the original script also only logged: missing task files, and irregular ids. */
  warnings: string[];
}

/**
 * Builds the consolidated dataset as the original `extract_data.py` does: the domains of the task
 * list in sorted order, each domain's ids in list order, absent fields filled with the original's
 * defaults, missing task files skipped with a warning.
 */
export async function extractOsworldDataset(
  options: ExtractOsworldDatasetOptions,
): Promise<OsworldDatasetExtraction> {
  const examplesRoot = await findEvaluationExamplesDir(options.osworldDir);
  const testAllFile = await resolveTaskListFile(
    examplesRoot,
    options.testAllFile ?? 'test_all.json',
  );
  const taskList = await readValidatedJsonFile(testAllFile, osworldTaskListSchema);
  const availableDomains = Object.keys(taskList);

  const requested = options.domains ?? availableDomains;
  const unknown = requested.filter((domain) => !Object.hasOwn(taskList, domain));
  if (unknown.length > 0)
    throw new UnknownOsworldDomainError(unknown, availableDomains, testAllFile);

  const warnings: string[] = [];
  const tasks: OsworldTask[] = [];
  const domainsById = new Map<string, string>();
  for (const domain of [...new Set(requested)].sort()) {
    const ids = taskIdsOf(taskList, domain);
    const seenInDomain = new Set<string>();
    const loaded = await Promise.all(
      ids.map((id) =>
        loadTaskFile(path.join(examplesRoot, 'examples', domain, `${id}.json`), domain, id),
      ),
    );
    for (const [index, entry] of loaded.entries()) {
      const listedId = ids[index] ?? '';
      if (entry === null) {
        warnings.push(
          `Task file not found: ${path.join(examplesRoot, 'examples', domain, `${listedId}.json`)}`,
        );
        continue;
      }
      if (seenInDomain.has(listedId)) {
        warnings.push(
          `Task ${listedId} is listed twice in domain '${domain}'; the second entry is skipped`,
        );
        continue;
      }
      seenInDomain.add(listedId);
      if (entry.task_id !== listedId) {
        warnings.push(
          `Task file ${domain}/${listedId}.json has id '${entry.task_id}'; the dataset uses the file's id`,
        );
      }
      const otherDomain = domainsById.get(entry.task_id);
      if (otherDomain !== undefined) {
        warnings.push(
          `Task id ${entry.task_id} appears in domains '${otherDomain}' and '${domain}'; key tasks by (domain, id)`,
        );
      }
      domainsById.set(entry.task_id, domain);
      tasks.push(entry);
    }
  }

  const domainCounts: Record<string, number> = {};
  for (const task of tasks) domainCounts[task.domain] = (domainCounts[task.domain] ?? 0) + 1;
  const now = options.now?.() ?? new Date();
  return {
    dataset: {
      metadata: {
        total_tasks: tasks.length,
        domains: domainCounts,
        extracted_at: formatPythonUtcTimestamp(now.getTime()),
      },
      tasks,
    },
    warnings,
  };
}

/** Writes the dataset byte-compatible with the original (`json.dump(indent=2)`, ASCII-escaped). */
export async function writeOsworldDataset(file: string, dataset: OsworldDataset): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, formatPythonJson(dataset));
}

/** Accepts an OSWorld checkout or its `evaluation_examples` directory. */
async function findEvaluationExamplesDir(osworldDir: string): Promise<string> {
  const nested = path.resolve(osworldDir, 'evaluation_examples');
  if (await isDirectory(path.join(nested, 'examples'))) return nested;
  const direct = path.resolve(osworldDir);
  if (await isDirectory(path.join(direct, 'examples'))) return direct;
  throw new OsworldDatasetError(
    direct,
    'not an OSWorld directory (no evaluation_examples/examples or examples/ inside)',
  );
}

async function resolveTaskListFile(examplesRoot: string, testAllFile: string): Promise<string> {
  if (path.isAbsolute(testAllFile)) return testAllFile;
  const fromWorkingDir = path.resolve(testAllFile);
  return (await isFile(fromWorkingDir)) ? fromWorkingDir : path.resolve(examplesRoot, testAllFile);
}

function taskIdsOf(taskList: OsworldTaskList, domain: string): string[] {
  return taskList[domain] ?? [];
}

async function loadTaskFile(
  file: string,
  domain: string,
  listedId: string,
): Promise<OsworldTask | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isFileNotFound(error)) return null;
    throw new OsworldDatasetError(file, `cannot be read: ${(error as Error).message}`);
  }
  const raw = parseJson(file, text);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new OsworldDatasetError(file, 'a task file must hold a JSON object');
  }
  const fields = raw as Record<string, unknown>;
  const valueOr = (key: string, fallback: unknown): unknown =>
    Object.hasOwn(fields, key) ? fields[key] : fallback;
  // Same keys, order and defaults as the original's normalisation (dict.get with a default).
  const task = {
    task_id: valueOr('id', listedId),
    domain,
    instruction: valueOr('instruction', ''),
    snapshot: valueOr('snapshot', ''),
    related_apps: valueOr('related_apps', []),
    source: valueOr('source', ''),
    config: valueOr('config', []),
    evaluator: valueOr('evaluator', {}),
    trajectory: valueOr('trajectory', ''),
    proxy: valueOr('proxy', false),
    fixed_ip: valueOr('fixed_ip', false),
    possibility_of_env_change: valueOr('possibility_of_env_change', 'low'),
  };
  const checked = osworldTaskSchema.safeParse(task);
  if (!checked.success) throw new OsworldDatasetError(file, z.prettifyError(checked.error));
  return task as OsworldTask;
}

export async function readValidatedJsonFile<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const problem = isFileNotFound(error)
      ? 'file not found'
      : `cannot be read: ${(error as Error).message}`;
    throw new OsworldDatasetError(file, problem);
  }
  const value = parseJson(file, text);
  const checked = schema.safeParse(value);
  if (!checked.success) throw new OsworldDatasetError(file, z.prettifyError(checked.error));
  return checked.data;
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new OsworldDatasetError(file, `invalid JSON: ${(error as Error).message}`);
  }
}

async function isDirectory(candidate: string): Promise<boolean> {
  try {
    return (await stat(candidate)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(candidate: string): Promise<boolean> {
  try {
    return (await stat(candidate)).isFile();
  } catch {
    return false;
  }
}

function isFileNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
