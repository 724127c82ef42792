export type {
  FakeChatMessage,
  FakeChatRequest,
  FakeLlmReply,
  FakeLlmScript,
  FakeLlmScriptFn,
  FakeToolCall,
} from './chat-script.js';
export {
  FAKE_LLM_PRICE,
  startFakeLlm,
  type FakeLlm,
  type FakeLlmPrice,
  type FakeLlmArrival,
  type FakeLlmRateLimit,
  type FakeLlmFaults,
  type FakeLlmOptions,
  type FakeLlmStats,
} from './fake-llm-server.js';
export { webshopRulePolicy } from './webshop-rule-policy.js';
