export type {
  AgentDecision,
  AgentDecisionKind,
  AgentEpisode,
  AvailableActions,
  EpisodeContext,
  WebshopAgent,
  WebshopObservation,
} from './webshop-agent.js';
export {
  parseAction,
  parseAgentReply,
  type ParsedAction,
  type ParsedReply,
} from './action-parser.js';
export { RuleAgent, instructionToQuery } from './rule-agent.js';
export { LlmAgent, costUsd, type LlmAgentOptions, type PriceTable } from './llm-agent.js';
export { LlmRequestError, LlmUnavailableError, type LlmUnavailableDetails } from './llm-errors.js';
export { defaultRetryPolicy, type RetryPolicy } from './chat-completions-client.js';
export {
  agentConfigSchema,
  createAgent,
  llmAgentConfigSchema,
  priceTableSchema,
  ruleAgentConfigSchema,
  type AgentConfig,
  type AgentConfigInput,
  type AgentRuntime,
  type LlmAgentConfig,
} from './agent-config.js';
