import { describe, expect, it } from 'vitest';
import { UsageError } from '@benchfleet/core';
import { keyFingerprint, LlmGovernor, LlmLimitsTable } from '@benchfleet/llm-governor';
import { occupyPort, useTestServices } from '@benchfleet/testing';
import { startMetricsServer, WorkerMetrics } from './worker-metrics.js';

describe('the metrics server', () => {
  it('binds port 0 to a free port and reports which', async () => {
    const metrics = new WorkerMetrics('webshop');
    metrics.outcome({ status: 'success', totalSteps: 3, tokensIn: 10, tokensOut: 2 });
    const server = await startMetricsServer(metrics, 0, () => null);
    try {
      expect(server.port).toBeGreaterThan(0);
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(text).toContain('benchfleet_steps_total{queue="webshop"} 3');
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('listens on this machine only unless told otherwise', async () => {
    const local = await startMetricsServer(new WorkerMetrics('webshop'), 0, () => null);
    const open = await startMetricsServer(new WorkerMetrics('webshop'), 0, () => null, '0.0.0.0');
    try {
      expect(local.address).toBe('127.0.0.1');
      expect(open.address).toBe('0.0.0.0');
    } finally {
      await local.close();
      await open.close();
    }
  });

  it('names a port that is taken and the setting that changes it', async () => {
    const taken = await occupyPort('127.0.0.1');
    try {
      const attempt = startMetricsServer(new WorkerMetrics('webshop'), taken.port, () => null);
      await expect(attempt).rejects.toBeInstanceOf(UsageError);
      await expect(attempt).rejects.toThrow(
        `metrics port ${taken.port} on 127.0.0.1 is already in use: pick another with --metrics-port or BENCHFLEET_METRICS_PORT`,
      );
    } finally {
      await taken.release();
    }
  });
});

describe('the LLM lanes on /metrics', () => {
  const services = useTestServices();

  it('shows per provider, key fingerprint and model the rates against the limits, 429s, the concurrency target and spend, read from the governor in Redis; never the key', async () => {
    const apiKey = 'sk-metrics-secret-key-42';
    const provider = 'http://llm.test/v1';
    const governor = new LlmGovernor({
      redisUrl: services.redisUrl,
      prefix: services.prefix,
      limits: new LlmLimitsTable({
        inline: { requestsPerMinute: 600, tokensPerMinute: 90_000 },
        prices: { priced: { inputUsdPerMillion: 2, outputUsdPerMillion: 8 } },
      }),
    });
    // Per-minute rates slide across a minute's end: the calls and the scrape fall in one minute.
    const toNextMinute = 60_000 - (Date.now() % 60_000);
    if (toNextMinute < 10_000)
      await new Promise((resolve) => setTimeout(resolve, toNextMinute + 20));
    const metrics = new WorkerMetrics('webshop', { worker: 'w-1' });
    metrics.watchLlmLanes(governor);
    const server = await startMetricsServer(metrics, 0, () => null);
    try {
      const call = async (model: string, kind: 'ok' | 'rate-limited') => {
        const permit = await governor.acquire({
          lane: { provider, apiKey, model },
          estimate: { promptTokens: 100, maxTokens: 50 },
          signal: new AbortController().signal,
          attribution: { runId: 'run-m', taskId: 't', attempt: 1 },
        });
        await permit.settle(
          kind === 'ok'
            ? { kind, usage: { promptTokens: 1000, completionTokens: 500 } }
            : { kind, status: 429, headers: { 'retry-after-ms': '1' } },
        );
      };
      await call('priced', 'ok');
      await call('priced', 'ok');
      await call('priced', 'rate-limited');
      await call('unpriced', 'ok');
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      const fingerprint = keyFingerprint(provider, apiKey);
      const labels = (model: string) =>
        `{provider="${provider}",key="${fingerprint}",model="${model}",worker="w-1"}`;
      expect(text).toContain(`benchfleet_llm_requests_per_minute${labels('priced')} 3`);
      expect(text).toContain(`benchfleet_llm_requests_per_minute_limit${labels('priced')} 600`);
      expect(text).toContain(`benchfleet_llm_tokens_per_minute${labels('priced')} 3000`);
      expect(text).toContain(`benchfleet_llm_tokens_per_minute_limit${labels('priced')} 90000`);
      expect(text).toContain(`benchfleet_llm_rate_limited_per_minute${labels('priced')} 1`);
      expect(text).toContain(`benchfleet_llm_rate_limited${labels('priced')} 1`);
      expect(text).toMatch(
        new RegExp(
          `benchfleet_llm_concurrency_target${labels('priced').replace(/[{}.]/g, '\\$&')} \\d+`,
        ),
      );
      expect(text).toContain(`benchfleet_llm_in_flight${labels('priced')} 0`);
      // Two answered calls of 1000 + 500 tokens at $2 / $8 per million: $0.012.
      expect(text).toContain(`benchfleet_llm_spent_usd${labels('priced')} 0.012`);
      expect(text).toContain(`benchfleet_llm_priced${labels('priced')} 1`);
      // $0.012 for 3000 tokens, at 3000 tokens a minute: $0.72 an hour.
      expect(text).toMatch(
        new RegExp(
          `benchfleet_llm_projected_spend_usd_per_hour${labels('priced').replace(/[{}.]/g, '\\$&')} 0\\.72`,
        ),
      );
      // A model with no price: its spend is unknown, not $0.
      expect(text).toContain(`benchfleet_llm_priced${labels('unpriced')} 0`);
      expect(text).not.toContain(`benchfleet_llm_spent_usd${labels('unpriced')}`);
      expect(text).toContain('benchfleet_llm_lanes{worker="w-1"} 2');
      expect(text).not.toContain(apiKey);
    } finally {
      await server.close();
      await governor.close();
    }
  });
});
