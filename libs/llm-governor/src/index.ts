export {
  LlmGovernor,
  type AttemptRunningCheck,
  type GovernorSnapshot,
  type LaneSnapshot,
  type LlmBudget,
  type LlmCallGate,
  type LlmCallRequest,
  type LlmGovernorOptions,
  type LlmOutcome,
  type LlmPermit,
  type LlmSettlement,
  type SpendTotals,
} from './llm-governor.js';
export {
  AttemptNotRunningError,
  BudgetExceededError,
  GovernorUnavailableError,
  PriceUnknownError,
  RateLimitedTooLongError,
  type BudgetScope,
} from './governor-errors.js';
export {
  keyFingerprint,
  laneIdentity,
  type LaneIdentity,
  type LlmAttribution,
  type LlmLane,
} from './llm-lane.js';
export {
  bucketWindow,
  inlineLimitsSchema,
  limitEntrySchema,
  limitsFileSchema,
  LlmLimitsTable,
  normalizeProvider,
  readLimitsFile,
  type BucketWindow,
  type InlineLimits,
  type LaneLimits,
  type LimitEntry,
} from './llm-limits.js';
export {
  costOf,
  costUsd,
  modelPriceSchema,
  priceTableSchema,
  readPriceTableSource,
  type ModelPrice,
  type PriceTable,
} from './price-table.js';
export {
  holdOffMs,
  parseResetDuration,
  readRateHints,
  retryAfterMs,
  type HeaderSource,
  type ProviderRateHints,
} from './rate-limit-headers.js';
export {
  CHARS_PER_TOKEN,
  estimateCall,
  estimatedTotal,
  estimatePromptTokens,
  TOKENS_PER_MESSAGE,
  type TokenEstimate,
} from './token-estimate.js';
export { DEFAULT_MAX_TOKENS, estimateChatRequest, IMAGE_TOKENS } from './chat-request-estimate.js';
export {
  startLlmRelay,
  type LlmRelay,
  type LlmRelayOptions,
  type RelayBudgetEvent,
  type RelayedCall,
  type RelayedReply,
  type RelayOutcome,
  type RelayRefusal,
  type RelayRefusalReason,
  type RelayUpstream,
} from './llm-relay.js';
export {
  modelInfoBody,
  openAiModelList,
  resolveRelayModel,
  type RelayModel,
} from './llm-relay-models.js';
export { RelayedCallLedger, type StepLlmUsage } from './relayed-call-ledger.js';
export { limitsTableOf, llmGovernorFlagShape, type LlmGovernorFlags } from './governor-flags.js';
