import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  occupyPort,
  OTEL_LOAD_PROBE_NODE_OPTIONS,
  otelLoadReportOf,
  runCli,
  startCli,
  startFakeLlm,
  startOtlpReceiver,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type FakeLlm,
  type OtlpReceiver,
  type ReceivedSpan,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// The worker process with tracing: spans of real WebShop episodes reach an OTLP receiver, with
// the parentage a trace viewer shows (LLM call → attempt), linked to the scheduler's enqueue.

const services = useTestServices();
const API_KEY = 'sk-test-secret-key-tracing-77';
let producer: JobProducer;
let llm: FakeLlm;
const workers: StartedProcess[] = [];
const receivers: OtlpReceiver[] = [];

/** The test's environment without OTEL_* variables a developer's shell may hold. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(services.env))
    if (!key.startsWith('OTEL_')) env[key] = value;
  return { ...env, LOG_LEVEL: 'info', ...extra };
}

function startWorker(id: string, extra: Record<string, string>): StartedProcess {
  const worker = startCli(
    'worker-webshop',
    ['--worker-id', id, '--concurrency', '4'],
    envWith({ LLM_API_KEY: API_KEY, NODE_OPTIONS: OTEL_LOAD_PROBE_NODE_OPTIONS, ...extra }),
  );
  workers.push(worker);
  return worker;
}

async function stopWorker(worker: StartedProcess): Promise<number | null> {
  worker.child.kill('SIGTERM');
  return (await worker.exited).code;
}

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  receivers.push(started);
  return started;
}

async function settledTasks(runId: string) {
  return waitFor(
    `run ${runId} to settle`,
    async () => {
      const tasks = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .orderBy('seq')
        .execute();
      return tasks.length > 0 &&
        tasks.every((task) => task.status !== 'queued' && task.status !== 'running')
        ? tasks
        : undefined;
    },
    600_000,
    100,
  );
}

function only(spans: readonly ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean) {
  const found = spans.filter(predicate);
  expect(found, spans.map((span) => span.name).join(', ')).toHaveLength(1);
  return found[0]!;
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  llm = await startFakeLlm({ latencyMs: 2 });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 200 }));
});

afterEach(async () => {
  await killLeftoverProcesses(workers);
  for (const started of receivers.splice(0)) await started.close();
});

afterAll(async () => {
  await llm.close();
  await producer.close();
});

describe('worker-webshop with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('exports a span per attempt and per step, and a GenAI span per LLM call under its attempt, linked to the scheduler enqueue', async () => {
    const collector = await receiver();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const worker = startWorker('webshop-traced', otel);
    await waitForWorkerReady(worker);

    // Enqueued by the real CLI, traced too: its jobs carry the enqueue span's context.
    const enqueued = await runCli(
      'scheduler',
      [
        'enqueue',
        '--benchmark',
        'webshop',
        '--split',
        'test',
        '--agent',
        'llm',
        '--llm-base-url',
        llm.baseUrl,
        '--llm-model',
        'fake-model',
        '--no-llm-check',
        '--max-tasks',
        '3',
        '--max-steps',
        '4',
        '--json',
      ],
      envWith(otel),
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const { runId } = JSON.parse(enqueued.stdout) as { runId: string };
    const tasks = await settledTasks(runId);
    expect(tasks).toHaveLength(3);
    expect(await stopWorker(worker)).toBe(0);

    // The SDK was loaded and registered (the check the "off" test relies on).
    const probe = otelLoadReportOf(worker.output());
    expect(probe?.sdkModules).toBeGreaterThan(0);
    expect(probe?.registered).toEqual(expect.arrayContaining(['context', 'trace']));

    const spans = collector.spans();
    const enqueue = only(spans, (s) => s.name === 'benchfleet.run.enqueue');
    expect(enqueue.kind).toBe(4);
    expect(enqueue.resource['service.name']).toBe('benchfleet-scheduler');
    expect(enqueue.attributes).toMatchObject({
      'benchfleet.run.id': runId,
      'benchfleet.benchmark': 'webshop',
      'benchfleet.enqueue.operation': 'enqueue',
      'messaging.system': 'bullmq',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'webshop',
      'messaging.batch.message_count': 3,
    });

    const attempts = spans.filter((s) => s.name === 'benchfleet.task.attempt');
    expect(attempts.map((s) => s.attributes['benchfleet.task.id']).sort()).toEqual(
      tasks.map((task) => task.task_id).sort(),
    );
    for (const task of tasks) {
      const attempt = only(attempts, (s) => s.attributes['benchfleet.task.id'] === task.task_id);
      // Each attempt is the root of its own trace, linked to the enqueue that made its job.
      expect(attempt.parentSpanId).toBeUndefined();
      expect(attempt.links).toEqual([{ traceId: enqueue.traceId, spanId: enqueue.spanId }]);
      expect(attempt.resource).toMatchObject({
        'service.name': 'benchfleet-worker-webshop',
        'service.instance.id': 'webshop-traced',
      });
      expect(attempt.attributes).toMatchObject({
        'benchfleet.run.id': runId,
        'benchfleet.task.attempt': 1,
        'benchfleet.benchmark': 'webshop',
        'benchfleet.worker.id': 'webshop-traced',
        'benchfleet.outcome.status': task.status,
        'benchfleet.outcome.stop_reason': task.final_api_status,
        'benchfleet.outcome.steps': task.total_steps,
        'benchfleet.usage.input_tokens': task.tokens_in,
        'benchfleet.usage.output_tokens': task.tokens_out,
      });
      expect(attempt.status.code).toBe(0);

      const inTrace = spans.filter((s) => s.traceId === attempt.traceId);
      const steps = inTrace
        .filter((s) => s.name === 'benchfleet.step')
        .sort(
          (a, b) =>
            Number(a.attributes['benchfleet.step.number']) -
            Number(b.attributes['benchfleet.step.number']),
        );
      expect(steps.map((s) => s.attributes['benchfleet.step.number'])).toEqual(
        Array.from({ length: task.total_steps }, (_, index) => index + 1),
      );
      const recorded = await services.db
        .selectFrom('steps')
        .select(['step', 'action', 'tokens_in', 'tokens_out'])
        .where('run_id', '=', runId)
        .where('task_id', '=', task.task_id)
        .orderBy('step')
        .execute();
      steps.forEach((step, index) => {
        const row = recorded[index]!;
        const action = String((row.action as { action: string }).action);
        // A summary: long actions (a search for a whole goal) are cut at 120 characters.
        const summary = action.length > 120 ? `${action.slice(0, 120)}…` : action;
        expect(step.parentSpanId).toBe(attempt.spanId);
        expect(step.attributes).toMatchObject({
          'benchfleet.run.id': runId,
          'benchfleet.task.id': task.task_id,
          'benchfleet.task.attempt': 1,
          'benchfleet.step.action': summary,
          'benchfleet.step.action_kind': /^(\w+)\[/.exec(action)?.[1] ?? expect.any(String),
          'benchfleet.usage.input_tokens': row.tokens_in,
          'benchfleet.usage.output_tokens': row.tokens_out,
        });
      });

      // The agent's calls, made inside the attempt through the governor: GenAI client spans.
      const calls = inTrace.filter((s) => s.name === 'chat fake-model');
      expect(calls.length).toBeGreaterThanOrEqual(task.total_steps);
      for (const call of calls) {
        expect(call.parentSpanId).toBe(attempt.spanId);
        expect(call.kind).toBe(3);
        expect(call.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'fake-model',
          'server.address': '127.0.0.1',
          'benchfleet.run.id': runId,
          'benchfleet.task.id': task.task_id,
          'benchfleet.task.attempt': 1,
          'benchfleet.llm.outcome': 'ok',
        });
        expect(call.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
        expect(call.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
      }
      const callTokens = calls.reduce(
        (sum, call) => sum + Number(call.attributes['gen_ai.usage.input_tokens']),
        0,
      );
      expect(callTokens).toBe(task.tokens_in);
    }
    // The worker's key reached no span, attribute or resource.
    expect(
      JSON.stringify(spans, (_key, value: unknown) =>
        typeof value === 'bigint' ? String(value) : value,
      ),
    ).not.toContain(API_KEY);
  });

  it('without the variable: loads no OpenTelemetry SDK module and registers no tracer provider, and plays its episodes', async () => {
    const worker = startWorker('webshop-untraced', {});
    await waitForWorkerReady(worker);
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'webshop', maxTasks: 2, maxSteps: 3, flags: { split: 'test', agent: 'rule' } },
    );
    const tasks = await settledTasks(runId);
    expect(tasks.every((task) => task.status === 'success' || task.status === 'failed')).toBe(true);
    expect(await stopWorker(worker)).toBe(0);
    // Only the API's no-op facade may be loaded (prom-client asks for it): no SDK, nothing registered.
    expect(otelLoadReportOf(worker.output()), worker.output()).toMatchObject({
      sdkModules: 0,
      registered: [],
    });
  });

  it('with the collector away: every episode is played and recorded, and the export failures are logged once with a count, not per span', async () => {
    const port = await occupyPort();
    await port.release();
    const worker = startWorker('webshop-collector-away', {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port.port}`,
      // Small batches: many exports fail while the run plays, not one at shutdown.
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
      // Refused connections are retried until the export's deadline: fail fast.
      OTEL_EXPORTER_OTLP_TIMEOUT: '200',
    });
    await waitForWorkerReady(worker);
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'webshop', maxTasks: 12, maxSteps: 5, flags: { split: 'test', agent: 'rule' } },
    );
    const tasks = await settledTasks(runId);
    expect(tasks).toHaveLength(12);
    expect(tasks.every((task) => task.status === 'success' || task.status === 'failed')).toBe(true);
    expect(await stopWorker(worker)).toBe(0);
    const told = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('could not export spans'));
    // Told once as it began, once more at shutdown with how many more failed in the interval.
    expect(told, worker.output()).toHaveLength(2);
    expect(JSON.parse(told[0]!)).toMatchObject({
      level: 40,
      endpoint: `http://127.0.0.1:${port.port}/v1/traces`,
    });
    expect((JSON.parse(told[1]!) as { repeated: number }).repeated).toBeGreaterThanOrEqual(2);
  });
});
