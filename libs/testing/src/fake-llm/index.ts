export type { FakeChatRequest } from './chat-script.js';
export {
  FAKE_LLM_PRICE,
  startFakeLlm,
  type FakeLlm,
  type FakeLlmOptions,
} from './fake-llm-server.js';
export { webshopRulePolicy } from './webshop-rule-policy.js';
