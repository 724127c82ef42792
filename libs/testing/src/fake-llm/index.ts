export type {
  FakeChatMessage,
  FakeChatRequest,
  FakeLlmReply,
  FakeLlmScript,
  FakeLlmScriptFn,
} from './chat-script.js';
export {
  startFakeLlm,
  type FakeLlm,
  type FakeLlmArrival,
  type FakeLlmRateLimit,
  type FakeLlmFaults,
  type FakeLlmOptions,
  type FakeLlmStats,
} from './fake-llm-server.js';
export { webshopRulePolicy } from './webshop-rule-policy.js';
