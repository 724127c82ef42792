import { existsSync } from 'node:fs';
import { z } from 'zod';
import { UsageError, errorMessage, type Benchmark } from '@benchfleet/core';
import { agentConfigSchema, type AgentConfig } from '@benchfleet/agents';
import { webshopCatalogRepository, type Database } from '@benchfleet/db';
import { loadOsworldDataset } from '@benchfleet/osworld';
import type { PlannedTask, RunPlan } from './run-enqueuer.js';

/** OSWorld's domains; a `--domain` among them makes the run an OSWorld run. */
export const OSWORLD_DOMAINS = [
  'chrome',
  'gimp',
  'libreoffice_calc',
  'libreoffice_impress',
  'libreoffice_writer',
  'multi_apps',
  'os',
  'thunderbird',
  'vlc',
  'vs_code',
] as const;

export const WEBSHOP_SPLITS = { test: [0, 499], eval: [500, 1499], train: [1500, Number.MAX_SAFE_INTEGER] } as const;

/** The model Bytebot is asked to use, in the shape its API takes. */
export const bytebotModelSchema = z
  .object({
    provider: z.string().min(1),
    name: z.string().min(1),
    title: z.string().min(1),
    contextWindow: z.number().int().positive().optional(),
  })
  .strict();

export interface EnqueueOptions {
  benchmark?: Benchmark;
  domain: string[];
  dataset?: string;
  osworldDir?: string;
  maxTasks?: number;
  maxSteps?: number;
  stallTimeoutS?: number;
  model?: string;
  agent?: string;
  llmBaseUrl?: string;
  llmModel?: string;
  llmTemperature?: number;
  split?: string;
  goals?: string;
  catalog?: string;
  observationMode?: string;
  runName?: string;
}

export function splitList(values: string[]): string[] {
  return values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
}

export function parseModelJson(text: string | undefined): z.output<typeof bytebotModelSchema> | null {
  if (text === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--model is not valid JSON (${(error as Error).message}); expected e.g. '{"provider":"anthropic","name":"claude-sonnet-4","title":"Claude Sonnet 4"}'`);
  }
  const parsed = bytebotModelSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.code === 'invalid_type' && issue.input === undefined ? `missing field "${issue.path.join('.')}"` : `${issue.path.join('.') || 'value'}: ${issue.message}`,
    );
    throw new UsageError(`--model: ${problems.join('; ')} (expected {"provider", "name", "title"})`);
  }
  return parsed.data;
}

/** `0-499`, `7`, `0-9,20-29` → sorted unique goal indexes. */
export function parseGoalRanges(text: string): number[] {
  const out = new Set<number>();
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) throw new UsageError(`--goals: "${part}" is not a goal index or range like 0-499`);
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from) throw new UsageError(`--goals: range "${part}" ends before it starts`);
    for (let i = from; i <= to; i += 1) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

export function inferBenchmark(options: EnqueueOptions, domains: string[]): Benchmark {
  if (options.benchmark) return options.benchmark;
  if (options.dataset || options.osworldDir) return 'osworld';
  if (options.agent || options.split || options.goals || options.catalog || options.llmBaseUrl) return 'webshop';
  if (domains.length > 0 && domains.every((domain) => (OSWORLD_DOMAINS as readonly string[]).includes(domain))) return 'osworld';
  if (domains.length > 0) return 'webshop';
  throw new UsageError('say which benchmark to run: --benchmark osworld|webshop, or --domain D (e.g. --domain chrome)');
}

function defaultOsworldSource(): string {
  const found = ['../shared/osworld/evaluation_examples', './osworld/evaluation_examples'].find((candidate) => existsSync(candidate));
  if (!found) {
    throw new UsageError('no OSWorld tasks found: pass --dataset FILE (from `scheduler osworld extract`) or --osworld-dir DIR, or set OSWORLD_DIR');
  }
  return found;
}

export async function planOsworldRun(options: EnqueueOptions): Promise<RunPlan> {
  const domains = splitList(options.domain);
  const source = options.dataset ?? options.osworldDir ?? defaultOsworldSource();
  const { dataset } = await loadOsworldDataset(source, domains.length ? { domains } : {});
  let tasks = dataset.tasks;
  if (options.maxTasks !== undefined) tasks = tasks.slice(0, options.maxTasks);
  if (tasks.length === 0) throw new UsageError(`no OSWorld task matches (source ${source}, domains ${domains.join(',') || 'all'})`);
  const model = parseModelJson(options.model);
  const config = {
    source,
    domains: domains.length ? domains : Object.keys(dataset.metadata.domains),
    max_steps: options.maxSteps ?? 100,
    stall_timeout_seconds: options.stallTimeoutS ?? 300,
  };
  return {
    benchmark: 'osworld',
    name: options.runName ?? `osworld-${domains.join('+') || 'all'}`,
    config,
    model,
    agent: { kind: 'bytebot' },
    tasks: tasks.map(
      (task): PlannedTask => ({
        taskId: task.task_id,
        domain: task.domain,
        instruction: task.instruction,
        spec: task as unknown as Record<string, unknown>,
      }),
    ),
  };
}

export async function planWebshopRun(db: Database, options: EnqueueOptions): Promise<RunPlan> {
  const catalogs = webshopCatalogRepository(db);
  const catalogId = options.catalog ?? (await catalogs.latestId());
  if (!catalogId) throw new UsageError('no WebShop catalog in Postgres: run `scheduler webshop import --demo` (or `scheduler webshop download`) first');
  if (options.catalog && !(await catalogs.get(options.catalog))) {
    const known = (await catalogs.list()).map((c) => c.id);
    throw new UsageError(`--catalog ${options.catalog} not found; imported catalogs: ${known.join(', ') || 'none'}`);
  }
  const agent = buildAgentConfig(options);
  const goals = await catalogs.goals(catalogId);
  const domains = splitList(options.domain);
  const categoryOf = (goal: { goal: Record<string, unknown> }) => String(goal.goal.category ?? 'webshop');
  const available = [...new Set(goals.map(categoryOf))].sort();
  const unknown = domains.filter((domain) => !available.includes(domain));
  if (unknown.length) {
    throw new UsageError(
      `unknown domain ${unknown.map((d) => `'${d}'`).join(', ')}; valid: OSWorld ${OSWORLD_DOMAINS.join(', ')}; WebShop (catalog ${catalogId}) ${available.join(', ')}`,
    );
  }
  if (options.split && !(options.split in WEBSHOP_SPLITS)) {
    throw new UsageError(`--split ${options.split}: expected test, eval or train`);
  }
  let selected = goals;
  if (options.goals) {
    const wanted = new Set(parseGoalRanges(options.goals));
    selected = selected.filter((goal) => wanted.has(goal.goal_index));
  } else {
    const [from, to] = WEBSHOP_SPLITS[(options.split ?? 'test') as keyof typeof WEBSHOP_SPLITS];
    selected = selected.filter((goal) => goal.goal_index >= from && goal.goal_index <= to);
  }
  if (domains.length) selected = selected.filter((goal) => domains.includes(categoryOf(goal)));
  if (options.maxTasks !== undefined) selected = selected.slice(0, options.maxTasks);
  if (selected.length === 0) {
    throw new UsageError(
      `no WebShop goal matches (catalog ${catalogId} has ${goals.length} goals; split ${options.split ?? 'test'}${options.goals ? `, goals ${options.goals}` : ''}${domains.length ? `, domains ${domains.join(',')}` : ''})`,
    );
  }
  return {
    benchmark: 'webshop',
    name: options.runName ?? `webshop-${options.split ?? (options.goals ? 'goals' : 'test')}-${agent.kind}`,
    config: {
      catalog_id: catalogId,
      split: options.goals ? null : (options.split ?? 'test'),
      goals: options.goals ?? null,
      max_steps: options.maxSteps ?? 15,
      observation_mode: options.observationMode ?? 'text',
    },
    model: agent.kind === 'llm' ? { provider: 'openai-compatible', name: agent.model, base_url: agent.baseUrl } : null,
    agent: agent as unknown as Record<string, unknown>,
    tasks: selected.map((goal) => ({
      taskId: `goal-${String(goal.goal_index).padStart(5, '0')}`,
      domain: categoryOf(goal),
      instruction: goal.instruction,
      spec: { goal_index: goal.goal_index, split: goal.split, asin: goal.asin },
      goalIndex: goal.goal_index,
    })),
  };
}

function buildAgentConfig(options: EnqueueOptions): AgentConfig {
  const kind = options.agent ?? 'rule';
  if (kind === 'rule') return { kind: 'rule' };
  if (kind !== 'llm') throw new UsageError(`--agent ${kind}: expected rule or llm`);
  if (!options.llmBaseUrl || !options.llmModel) {
    throw new UsageError('--agent llm needs --llm-base-url URL (an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1) and --llm-model NAME');
  }
  let url: URL;
  try {
    url = new URL(options.llmBaseUrl);
  } catch {
    throw new UsageError(`--llm-base-url ${options.llmBaseUrl} is not a URL`);
  }
  if (url.username || url.password) throw new UsageError('--llm-base-url must not carry credentials: put the key in LLM_API_KEY on the workers');
  const parsed = agentConfigSchema.safeParse({
    kind: 'llm',
    baseUrl: options.llmBaseUrl,
    model: options.llmModel,
    ...(options.llmTemperature !== undefined ? { temperature: options.llmTemperature } : {}),
  });
  if (!parsed.success) throw new UsageError(`LLM agent options: ${errorMessage(parsed.error)}`);
  return parsed.data;
}
