import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue } from 'bullmq';
import { listenOn } from '@benchfleet/core';

/** Prometheus metrics of one worker process, served with /healthz by `startMetricsServer`. */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly jobsCompleted: Counter<'queue' | 'job'>;
  readonly jobsFailed: Counter<'queue' | 'job'>;
  readonly jobDuration: Histogram<'queue' | 'job'>;
  readonly taskOutcomes: Counter<'queue' | 'status'>;
  readonly steps: Counter<'queue'>;
  readonly tokens: Counter<'queue' | 'direction'>;
  readonly queueDepth: Gauge<'queue' | 'state'>;

  constructor(
    readonly queueName: string,
    labels: Record<string, string> = {},
  ) {
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    this.jobsCompleted = new Counter({
      name: 'benchfleet_jobs_completed_total',
      help: 'Jobs that completed',
      labelNames: ['queue', 'job'],
      registers,
    });
    this.jobsFailed = new Counter({
      name: 'benchfleet_jobs_failed_total',
      help: 'Jobs that threw (retried or failed)',
      labelNames: ['queue', 'job'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'benchfleet_job_duration_seconds',
      help: 'Wall time of a job',
      labelNames: ['queue', 'job'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers,
    });
    this.taskOutcomes = new Counter({
      name: 'benchfleet_task_outcomes_total',
      help: 'Recorded task outcomes by status',
      labelNames: ['queue', 'status'],
      registers,
    });
    this.steps = new Counter({
      name: 'benchfleet_steps_total',
      help: 'Steps of recorded task outcomes',
      labelNames: ['queue'],
      registers,
    });
    this.tokens = new Counter({
      name: 'benchfleet_tokens_total',
      help: 'LLM tokens of recorded outcomes',
      labelNames: ['queue', 'direction'],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'benchfleet_queue_jobs',
      help: 'Jobs in the queue by state',
      labelNames: ['queue', 'state'],
      registers,
    });
  }

  jobFinished(event: { name: string; ok: boolean; durationMs: number }): void {
    const labels = { queue: this.queueName, job: event.name };
    (event.ok ? this.jobsCompleted : this.jobsFailed).inc(labels);
    this.jobDuration.observe(labels, event.durationMs / 1000);
  }

  outcome(event: {
    status: string;
    totalSteps: number;
    tokensIn: number;
    tokensOut: number;
  }): void {
    this.taskOutcomes.inc({ queue: this.queueName, status: event.status });
    this.steps.inc({ queue: this.queueName }, event.totalSteps);
    this.tokens.inc({ queue: this.queueName, direction: 'in' }, event.tokensIn);
    this.tokens.inc({ queue: this.queueName, direction: 'out' }, event.tokensOut);
  }

  /** Reads the queue's depth at scrape time. */
  watchQueue(queue: Queue): void {
    new Gauge({
      name: 'benchfleet_queue_depth',
      help: 'Jobs waiting or delayed in the queue (scaling signal)',
      labelNames: ['queue'],
      registers: [this.registry],
      collect: async () => {
        const counts = await queue
          .getJobCounts('wait', 'active', 'delayed', 'prioritized')
          .catch(() => undefined);
        if (!counts) return;
        for (const [state, n] of Object.entries(counts))
          this.queueDepth.set({ queue: this.queueName, state }, n);
      },
    }).set({ queue: this.queueName }, 0);
  }
}

export interface MetricsServer {
  port: number;
  /** The address it listens on. */
  address: string;
  close(): Promise<void>;
}

/**
 * `/metrics` (Prometheus text) and `/healthz`: 200 while `unhealthy()` is null, else 503 with its
 * reason (shutting down, or paused because a service it needs does not answer).
 */
export async function startMetricsServer(
  metrics: WorkerMetrics,
  port: number,
  unhealthy: () => string | null,
  host = '127.0.0.1',
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.url === '/metrics') {
      metrics.registry
        .metrics()
        .then((text) => {
          response.writeHead(200, { 'content-type': metrics.registry.contentType });
          response.end(text);
        })
        .catch((error: unknown) => {
          response.writeHead(500);
          response.end(String(error));
        });
      return;
    }
    if (request.url === '/healthz') {
      const problem = unhealthy();
      response.writeHead(problem === null ? 200 : 503, { 'content-type': 'text/plain' });
      response.end(problem === null ? 'ok\n' : `${problem}\n`);
      return;
    }
    response.writeHead(404);
    response.end();
  });
  const boundPort = await listenOn(server, {
    port,
    host,
    what: 'metrics port',
    setting: '--metrics-port or BENCHFLEET_METRICS_PORT',
  });
  const bound = server.address();
  return {
    port: boundPort,
    address: typeof bound === 'object' && bound ? bound.address : host,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
