import { z } from 'zod';
import {
  flag,
  httpUrl,
  numberBetween,
  oneOf,
  parsedText,
  roundLikePython,
  UsageError,
} from '@benchfleet/core';
import { defineBenchmark, type ScoredTask } from '@benchfleet/benchmark-kit';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import { defineTaskJob } from '@benchfleet/queue';
import { agentConfigSchema, type AgentConfig } from '@benchfleet/webshop-agents';
import { resolveCatalog } from './catalog-resolution.js';
import { checkLlmEndpoint } from './llm-endpoint-check.js';
import { webshopJsonlExporter } from './webshop-jsonl-export.js';
import { summarizeWebshopAction } from './webshop-action-summary.js';
import { webshopDemo } from './webshop-demo.js';
import { webshopTools } from './webshop-tools.js';
import { webshopWorker } from './webshop-worker.js';
import { webshopScorer } from './webshop-scorer.js';
import { webshopMigrations } from '../migrations/index.js';
import { webshopTaskDetail } from './webshop-task-detail.js';
import {
  WEBSHOP_SPLITS,
  webshopRunConfigSchema,
  webshopTaskResultSchema,
  webshopTaskSpecSchema,
  type WebshopTaskResult,
} from './webshop-run-config.js';

type GoalRange = readonly [from: number, to: number];

/** `0-499`, `7`, `0-9,20-29` → ranges, without listing their members (a range may be huge). */
export function parseGoalRanges(text: string): GoalRange[] {
  const ranges: GoalRange[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const match = /^(\d{1,9})(?:-(\d{1,9}))?$/.exec(part);
    if (!match)
      throw new Error(`"${part}" is not a goal index or a range; expected e.g. 0-499 or 0-9,20-29`);
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (to < from) throw new Error(`range "${part}" ends before it starts`);
    ranges.push([from, to]);
  }
  return ranges;
}

/** `scheduler enqueue`'s WebShop flags. */
const webshopEnqueueFlags = z.object({
  agent: flag(oneOf(['rule', 'llm']).optional(), {
    flag: '--agent <kind>',
    description: 'WebShop agent (default rule)',
  }),
  llmBaseUrl: flag(parsedText(httpUrl).optional(), {
    flag: '--llm-base-url <url>',
    description:
      'WebShop llm agent: OpenAI-compatible base URL (the key comes from LLM_API_KEY on the workers)',
  }),
  llmModel: flag(z.string().optional(), {
    flag: '--llm-model <name>',
    description: 'WebShop llm agent: model name',
  }),
  llmTemperature: flag(parsedText(numberBetween(0, 2)).optional(), {
    flag: '--llm-temperature <t>',
    description: 'WebShop llm agent: sampling temperature, 0 to 2 (default 0)',
  }),
  split: flag(oneOf(['test', 'eval', 'train']).optional(), {
    flag: '--split <split>',
    description: 'WebShop goal split (default test)',
  }),
  goals: flag(parsedText(parseGoalRanges).optional(), {
    flag: '--goals <ranges>',
    description: 'WebShop goal indexes, e.g. 0-499 or 0-9,20-29 (instead of --split)',
  }),
  catalog: flag(z.string().optional(), {
    flag: '--catalog <id>',
    description: 'WebShop catalog id (default: the latest imported)',
  }),
  observationMode: flag(oneOf(['text', 'text_rich']).optional(), {
    flag: '--observation-mode <mode>',
    description: 'WebShop observation mode (default text)',
  }),
  llmCheck: flag(parsedText((text) => text !== 'false').optional(), {
    flag: '--no-llm-check',
    description: 'WebShop llm agent: do not ask the endpoint for its models at enqueue',
  }),
});
type WebshopFlags = z.output<typeof webshopEnqueueFlags>;

function buildAgentConfig(flags: WebshopFlags): AgentConfig {
  const kind = flags.agent ?? 'rule';
  if (kind === 'rule') {
    const stray = (['llmBaseUrl', 'llmModel', 'llmTemperature'] as const).find(
      (name) => flags[name] !== undefined,
    );
    if (stray)
      throw new UsageError(
        `--${stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for the llm agent: add --agent llm, or drop it`,
      );
    return { kind: 'rule' };
  }
  if (!flags.llmBaseUrl || !flags.llmModel) {
    throw new UsageError(
      '--agent llm needs --llm-base-url URL (an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1) and --llm-model NAME',
    );
  }
  const url = new URL(flags.llmBaseUrl);
  if (url.username || url.password)
    throw new UsageError(
      '--llm-base-url must not carry credentials: put the key in LLM_API_KEY on the workers',
    );
  const parsed = agentConfigSchema.safeParse({
    kind: 'llm',
    baseUrl: flags.llmBaseUrl,
    model: flags.llmModel,
    ...(flags.llmTemperature !== undefined ? { temperature: flags.llmTemperature } : {}),
  });
  if (!parsed.success)
    throw new UsageError(
      `LLM agent options: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`,
    );
  return parsed.data;
}

function categoryOf(goal: { goal: Record<string, unknown> }): string {
  return String(goal.goal.category ?? 'webshop');
}

/** The paper's numbers: mean reward (failed and errored episodes count 0), its score (× 100), success and bought rates. */
export function webshopScores(
  tasks: readonly ScoredTask<WebshopTaskResult>[],
): Record<string, number> {
  const n = tasks.length;
  const rewardSum = tasks.reduce((sum, task) => sum + (task.reward ?? 0), 0);
  const bought = tasks.filter((task) => task.result?.purchased_asin).length;
  const successes = tasks.filter((task) => task.success === true).length;
  return {
    score: n ? roundLikePython((rewardSum / n) * 100, 2) : 0,
    average_reward: n ? roundLikePython(rewardSum / n, 4) : 0,
    success_rate: n ? roundLikePython(successes / n, 4) : 0,
    bought_rate: n ? roundLikePython(bought / n, 4) : 0,
  };
}

/**
 * WebShop (princeton-nlp) shopping episodes on a catalog imported into Postgres: one goal per
 * task, played by the paper's rule baseline or an LLM. Success is a purchase with the full reward.
 */
export const webshopBenchmark = defineBenchmark({
  name: 'webshop',
  title: 'WebShop',
  job: defineTaskJob({
    name: 'webshop-episode',
    queue: 'webshop',
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
    deadlineMs: 30 * 60 * 1000,
  }),
  runConfig: webshopRunConfigSchema,
  taskSpec: webshopTaskSpecSchema,
  taskResult: webshopTaskResultSchema,
  success: {
    label: 'reward = 1',
    meaning:
      'the episode bought a product that earns the full reward 1.0 (attributes, options, price and type all match)',
  },
  rewardIsPartial: true,
  display: {
    trajectory: 'pages',
    workerCommand: 'npx worker-webshop --concurrency 32',
    stopReasons: {
      bought: 'the agent bought a product: the reward scores that purchase',
      step_limit: 'the step limit was reached without a purchase (reward 0)',
    },
    finalStatuses: {
      BOUGHT: 'the episode ended with a purchase',
      STEP_LIMIT: 'the episode ran out of steps',
    },
    // A purchase short of reward 1: the components of the official reward that were not met.
    failureReason: {
      label: 'reward components missed',
      sql: `case when t.final_api_status = 'BOUGHT' then nullif(concat_ws(', ',
    case when (t.result->'reward_info'->>'r_att')::float8 < 1 then 'attribute' end,
    case when (t.result->'reward_info'->>'r_option')::float8 < 1 then 'option' end,
    case when (t.result->'reward_info'->>'r_price')::boolean = false then 'price' end,
    case when (t.result->'reward_info'->>'r_type')::float8 < 1 then 'type' end), '') end`,
    },
    taskDetail: webshopTaskDetail,
  },
  enqueueFlags: webshopEnqueueFlags,
  async domains(context) {
    const catalogs = new WebshopCatalogRepository(context.db);
    const catalogId = await catalogs.latestId();
    if (!catalogId) return { names: [], source: 'no catalog imported' };
    return { names: await catalogs.categories(catalogId), source: `catalog ${catalogId}` };
  },
  async plan(input, context) {
    const { flags } = input;
    if (flags.split && flags.goals)
      throw new UsageError('--split and --goals both choose goals: give one of them');
    const agent = buildAgentConfig(flags);
    const catalog = await resolveCatalog(context.db, flags.catalog);
    const catalogId = catalog.id;
    if (flags.goals) {
      const beyond = flags.goals.find(([, to]) => to >= catalog.goals);
      if (beyond) {
        throw new UsageError(
          `--goals ${beyond[0]}-${beyond[1]}: catalog ${catalogId} has goals 0-${catalog.goals - 1} only`,
        );
      }
    }
    const goals = await new WebshopCatalogRepository(context.db).goals(catalogId);
    const available = [...new Set(goals.map(categoryOf))].sort();
    const unknown = input.domains.filter((domain) => !available.includes(domain));
    if (unknown.length) {
      throw new UsageError(
        `unknown domain ${unknown.map((d) => `'${d}'`).join(', ')} for WebShop catalog ${catalogId}; its domains: ${available.join(', ')}`,
      );
    }
    const split = flags.split ?? 'test';
    const [from, to] = WEBSHOP_SPLITS[split];
    const wanted = (index: number) =>
      flags.goals
        ? flags.goals.some(([a, b]) => index >= a && index <= b)
        : index >= from && index <= to;
    let selected = goals.filter((goal) => wanted(goal.goal_index));
    if (input.domains.length)
      selected = selected.filter((goal) => input.domains.includes(categoryOf(goal)));
    if (input.maxTasks !== undefined) selected = selected.slice(0, input.maxTasks);
    if (selected.length === 0) {
      throw new UsageError(
        `no WebShop goal matches (catalog ${catalogId} has ${goals.length} goals; ${flags.goals ? 'the given --goals' : `split ${split}`}${input.domains.length ? `, domains ${input.domains.join(',')}` : ''})`,
      );
    }
    const goalsText = flags.goals?.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');
    return {
      name: input.runName ?? `webshop-${flags.goals ? 'goals' : split}-${agent.kind}`,
      config: {
        catalog_id: catalogId,
        split: flags.goals ? null : split,
        goals: goalsText ?? null,
        ...(input.maxSteps !== undefined ? { max_steps: input.maxSteps } : {}),
        ...(flags.observationMode ? { observation_mode: flags.observationMode } : {}),
      },
      model:
        agent.kind === 'llm'
          ? { provider: 'openai-compatible', name: agent.model, base_url: agent.baseUrl }
          : null,
      agent,
      tasks: selected.map((goal) => ({
        taskId: `goal-${String(goal.goal_index).padStart(5, '0')}`,
        domain: categoryOf(goal),
        instruction: goal.instruction,
        spec: { goal_index: goal.goal_index, split: goal.split, asin: goal.asin },
      })),
    };
  },
  async preflight({ agent, flags }, context) {
    const parsed = agentConfigSchema.safeParse(agent);
    if (!parsed.success || parsed.data.kind !== 'llm' || flags.llmCheck === false) return;
    await checkLlmEndpoint(
      parsed.data.baseUrl,
      parsed.data.model,
      context.env.LLM_API_KEY || undefined,
    );
  },
  scores: webshopScores,
  score: webshopScorer,
  exporters: { 'webshop-jsonl': webshopJsonlExporter },
  tools: webshopTools,
  migrations: webshopMigrations,
  sqlStatements: async () => (await import('./webshop-sql-statements.js')).webshopSqlStatements,
  summarizeAction: summarizeWebshopAction,
  demo: webshopDemo,
  worker: webshopWorker,
});
