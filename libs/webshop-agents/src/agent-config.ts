import type { Logger } from 'pino';
import { z } from 'zod';
import { priceTableSchema, type LlmCallGate } from '@benchfleet/llm-governor';
import type { RetryPolicy } from './chat-completions-client.js';
import { LlmAgent, type PriceTable } from './llm-agent.js';
import { RuleAgent } from './rule-agent.js';
import type { WebshopAgent } from './webshop-agent.js';

const ruleAgentConfigSchema = z.strictObject({ kind: z.literal('rule') });

/** Goes into job payloads and `runs.agent`: strict, so an `apiKey` (or any stray field) is refused. */
const llmAgentConfigSchema = z.strictObject({
  kind: z.literal('llm'),
  baseUrl: z.url({ protocol: /^https?$/ }).refine((url) => {
    const parsed = new URL(url);
    return parsed.username === '' && parsed.password === '';
  }, 'baseUrl must not carry credentials; pass the API key separately'),
  model: z.string().min(1),
  temperature: z.number().min(0).max(2).default(0),
  maxTokens: z.number().int().positive().default(512),
  timeoutMs: z.number().int().positive().default(60_000),
  historySteps: z.number().int().min(0).max(100).default(8),
  maxObservationChars: z.number().int().positive().default(4000),
  retry: z
    .strictObject({
      maxRetries: z.number().int().min(0).max(20).default(5),
      baseDelayMs: z.number().int().nonnegative().default(500),
      maxDelayMs: z.number().int().nonnegative().default(30_000),
      maxRetryAfterMs: z.number().int().nonnegative().default(60_000),
    })
    .prefault({}),
});

export const agentConfigSchema = z.discriminatedUnion('kind', [
  ruleAgentConfigSchema,
  llmAgentConfigSchema,
]);

export type AgentConfig = z.output<typeof agentConfigSchema>;

export { priceTableSchema };

/** What the app supplies beside the config: never part of a job payload. */
export interface AgentRuntime {
  readonly apiKey?: string;
  readonly priceTable?: PriceTable;
  readonly logger?: Logger;
  /** The fleet's LLM governor: every request of the agent goes through it. */
  readonly governor?: LlmCallGate;
  /** For tests: replaces the waiting and the jitter of the retry policy. */
  readonly sleep?: RetryPolicy['sleep'];
  readonly random?: RetryPolicy['random'];
}

/** Validates `config` (throws a ZodError naming every bad field) and builds the agent. */
export function createAgent(config: unknown, runtime: AgentRuntime = {}): WebshopAgent {
  const parsed = agentConfigSchema.parse(config);
  if (parsed.kind === 'rule') return new RuleAgent();
  return new LlmAgent({
    baseUrl: parsed.baseUrl,
    model: parsed.model,
    temperature: parsed.temperature,
    maxTokens: parsed.maxTokens,
    timeoutMs: parsed.timeoutMs,
    historySteps: parsed.historySteps,
    maxObservationChars: parsed.maxObservationChars,
    retry: {
      ...parsed.retry,
      ...(runtime.sleep !== undefined && { sleep: runtime.sleep }),
      ...(runtime.random !== undefined && { random: runtime.random }),
    },
    ...(runtime.apiKey !== undefined && { apiKey: runtime.apiKey }),
    ...(runtime.priceTable !== undefined && { priceTable: runtime.priceTable }),
    ...(runtime.logger !== undefined && { logger: runtime.logger }),
    ...(runtime.governor !== undefined && { governor: runtime.governor }),
  });
}
