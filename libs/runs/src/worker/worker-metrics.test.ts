import { describe, expect, it } from 'vitest';
import { UsageError } from '@benchfleet/core';
import { occupyPort } from '@benchfleet/testing';
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
