import { GENAI_PROVIDERS } from './span-attributes.js';

export interface LlmEndpoint {
  /** `gen_ai.provider.name`. */
  readonly providerName: string;
  /** `server.address` and `server.port`: the host only, never user info, path or query. */
  readonly serverAddress?: string;
  readonly serverPort?: number;
}

/** Hosts whose provider has a well-known name in the GenAI conventions. */
const PROVIDER_HOSTS: readonly (readonly [RegExp, string])[] = [
  [/(^|\.)api\.openai\.com$/, GENAI_PROVIDERS.openai],
  [/\.openai\.azure\.com$/, GENAI_PROVIDERS.azureOpenai],
  [/(^|\.)api\.anthropic\.com$/, GENAI_PROVIDERS.anthropic],
  [/(^|\.)api\.deepseek\.com$/, GENAI_PROVIDERS.deepseek],
  [/^generativelanguage\.googleapis\.com$/, GENAI_PROVIDERS.gcpGemini],
  [/(^|\.)api\.groq\.com$/, GENAI_PROVIDERS.groq],
  [/(^|\.)api\.mistral\.ai$/, GENAI_PROVIDERS.mistral],
  [/(^|\.)api\.perplexity\.ai$/, GENAI_PROVIDERS.perplexity],
  [/(^|\.)api\.x\.ai$/, GENAI_PROVIDERS.xai],
];

/**
 * What a GenAI span says about where a call went. Every endpoint the fleet calls speaks OpenAI's
 * Chat Completions, so an endpoint of no known provider (vLLM, a proxy, a fake) is `openai`, as
 * OpenAI's own instrumentations say for any base URL; `server.address` tells them apart.
 */
export function llmEndpointOf(baseUrl: string): LlmEndpoint {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { providerName: GENAI_PROVIDERS.openai };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const known = PROVIDER_HOSTS.find(([pattern]) => pattern.test(host));
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return {
    providerName: known?.[1] ?? GENAI_PROVIDERS.openai,
    serverAddress: host,
    serverPort: port,
  };
}
