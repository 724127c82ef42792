import axios from 'axios';
import { UsageError } from '@benchfleet/core';

const SKIP = 'or pass --no-llm-check to enqueue without checking';

/**
 * Asks the LLM endpoint once, at enqueue, whether it is there and serves the model: `GET
 * {baseUrl}/models` (every OpenAI-compatible server has it). Without this, a wrong URL costs every
 * task a round of retries before it ends in an error. An endpoint that wants a key the scheduler
 * does not have (401/403) counts as reachable: the key lives on the workers.
 */
export async function checkLlmEndpoint(
  baseUrl: string,
  model: string,
  apiKey?: string,
  timeoutMs = 5_000,
): Promise<void> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  let response;
  try {
    response = await axios.get(url, {
      timeout: timeoutMs,
      validateStatus: () => true,
      ...(apiKey ? { headers: { Authorization: `Bearer ${apiKey}` } } : {}),
    });
  } catch (error) {
    const code = axios.isAxiosError(error) ? (error.code ?? error.message) : String(error);
    throw new UsageError(
      `--llm-base-url ${baseUrl}: the endpoint cannot be reached (${code}); check the URL and that the server runs, ${SKIP}`,
    );
  }
  if (response.status === 401 || response.status === 403) return;
  if (response.status === 404) {
    throw new UsageError(
      `--llm-base-url ${baseUrl}: ${url} answered 404; an OpenAI-compatible base URL usually ends in /v1, ${SKIP}`,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    throw new UsageError(
      `--llm-base-url ${baseUrl}: ${url} answered HTTP ${response.status}; check the server, ${SKIP}`,
    );
  }
  const data: unknown = (response.data as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return;
  const offered = data
    .map((entry: unknown) => String((entry as { id?: unknown })?.id ?? ''))
    .filter(Boolean);
  if (offered.length > 0 && !offered.includes(model)) {
    throw new UsageError(
      `--llm-model ${model}: the endpoint does not offer it; it offers ${offered.slice(0, 10).join(', ')}${offered.length > 10 ? ', …' : ''} (${SKIP})`,
    );
  }
}
