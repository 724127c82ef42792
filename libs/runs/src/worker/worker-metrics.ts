import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue } from 'bullmq';
import { listenOn } from '@benchfleet/core';
import type { LlmLanesSource } from '@benchfleet/benchmark-kit';

const LANE_LABELS = ['provider', 'key', 'model'] as const;
type LaneLabel = (typeof LANE_LABELS)[number];
type LaneGauges = Record<
  | 'requests'
  | 'requestsLimit'
  | 'tokens'
  | 'tokensLimit'
  | 'limited'
  | 'limitedTotal'
  | 'target'
  | 'inFlight'
  | 'spent'
  | 'projected'
  | 'priced',
  Gauge<LaneLabel>
>;

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

  /**
   * The fleet's LLM lanes (provider, key fingerprint — never the key —, model) from the governor's
   * snapshot in Redis, read at scrape time: rates against their limits, 429s, the concurrency
   * target, spend, and spend projected over the next hour at the current token rate.
   */
  watchLlmLanes(source: LlmLanesSource): void {
    // One snapshot per scrape, shared by every gauge's collect (prom-client collects them at once).
    let reading: { at: number; done: Promise<void> } | undefined;
    const refresh = (): Promise<void> => {
      if (reading === undefined || Date.now() - reading.at > 1000)
        reading = { at: Date.now(), done: this.#readLanes(source, lanes, lanesSeen) };
      return reading.done;
    };
    const gauge = (name: string, help: string) =>
      new Gauge<LaneLabel>({
        name,
        help,
        labelNames: LANE_LABELS,
        registers: [this.registry],
        collect: refresh,
      });
    if (source.refusedWithoutAttempt) {
      const refused = source.refusedWithoutAttempt.bind(source);
      new Gauge({
        name: 'benchfleet_llm_relay_refused_without_attempt',
        help: "Relayed LLM calls refused since the worker started: no attempt ran on the worker's stack (an orphaned or cancelled agent task)",
        registers: [this.registry],
        collect() {
          this.set(refused());
        },
      });
    }
    if (source.refusedForeignCalls) {
      const refused = source.refusedForeignCalls.bind(source);
      new Gauge({
        name: 'benchfleet_llm_relay_refused_foreign_task',
        help: "Relayed LLM calls refused since the worker started: an attempt ran, but the call was another agent task's (one created beside the fleet, or left by a gone attempt)",
        registers: [this.registry],
        collect() {
          this.set(refused());
        },
      });
    }
    const lanesSeen = new Gauge({
      name: 'benchfleet_llm_lanes',
      help: 'LLM lanes the fleet has used (read from the governor in Redis at scrape time)',
      registers: [this.registry],
      collect: refresh,
    });
    const lanes: LaneGauges = {
      requests: gauge(
        'benchfleet_llm_requests_per_minute',
        'LLM requests in the last minute, fleet-wide',
      ),
      requestsLimit: gauge(
        'benchfleet_llm_requests_per_minute_limit',
        'Requests per minute allowed (configured, else learned from the provider)',
      ),
      tokens: gauge(
        'benchfleet_llm_tokens_per_minute',
        'LLM tokens in the last minute, fleet-wide',
      ),
      tokensLimit: gauge(
        'benchfleet_llm_tokens_per_minute_limit',
        'Tokens per minute allowed (configured, else learned from the provider)',
      ),
      limited: gauge(
        'benchfleet_llm_rate_limited_per_minute',
        '429s and overloads in the last minute',
      ),
      limitedTotal: gauge('benchfleet_llm_rate_limited', '429s and overloads since the lane began'),
      target: gauge('benchfleet_llm_concurrency_target', 'Fleet-wide concurrency target (AIMD)'),
      inFlight: gauge('benchfleet_llm_in_flight', 'LLM calls in flight, fleet-wide'),
      spent: gauge('benchfleet_llm_spent_usd', 'USD spent on the lane (absent: unpriced)'),
      projected: gauge(
        'benchfleet_llm_projected_spend_usd_per_hour',
        'USD the lane spends in an hour at its current token rate (absent: unpriced)',
      ),
      priced: gauge(
        'benchfleet_llm_priced',
        '1 when the lane has a price, 0 when its spend is unknown',
      ),
    };
  }

  async #readLanes(source: LlmLanesSource, lanes: LaneGauges, lanesSeen: Gauge): Promise<void> {
    const snapshot = await source.snapshot().catch(() => undefined);
    for (const lane of Object.values(lanes)) lane.reset();
    lanesSeen.reset();
    if (!snapshot) return;
    lanesSeen.set(snapshot.lanes.length);
    for (const lane of snapshot.lanes) {
      const labels = { provider: lane.provider, key: lane.keyFingerprint, model: lane.model };
      const limitOf = (limit: { configured?: number; learned?: number }) =>
        limit.configured ?? limit.learned;
      lanes.requests.set(labels, lane.requestsPerMinute);
      const rpm = limitOf(lane.limits.requestsPerMinute);
      if (rpm !== undefined) lanes.requestsLimit.set(labels, rpm);
      lanes.tokens.set(labels, lane.tokensPerMinute);
      const tpm = limitOf(lane.limits.tokensPerMinute);
      if (tpm !== undefined) lanes.tokensLimit.set(labels, tpm);
      lanes.limited.set(labels, lane.rateLimitedPerMinute);
      lanes.limitedTotal.set(labels, lane.totals.rateLimited);
      lanes.target.set(labels, lane.concurrency.target);
      lanes.inFlight.set(labels, lane.concurrency.inFlight);
      lanes.priced.set(labels, lane.priceKnown ? 1 : 0);
      if (lane.priceKnown) {
        lanes.spent.set(labels, lane.spentUsd);
        const perToken = lane.totals.tokens > 0 ? lane.spentUsd / lane.totals.tokens : 0;
        lanes.projected.set(labels, perToken * lane.tokensPerMinute * 60);
      }
    }
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
