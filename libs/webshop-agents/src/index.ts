export type {
  AgentDecision,
  EpisodeContext,
  WebshopAgent,
  WebshopObservation,
} from './webshop-agent.js';
export { RuleAgent, instructionToQuery } from './rule-agent.js';
export { LlmAgent } from './llm-agent.js';
export { LlmUnavailableError } from './llm-errors.js';
export {
  agentConfigSchema,
  createAgent,
  type AgentConfig,
  type AgentRuntime,
} from './agent-config.js';
