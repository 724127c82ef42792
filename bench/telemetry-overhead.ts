// What tracing costs, in two parts, each with tracing off (the default: no endpoint, no SDK
// loaded) and on (the SDK exporting over OTLP/HTTP protobuf to the test kit's receiver in a
// process of its own), side by side:
//
// 1. The real worker path: a `worker-webshop` process playing WebShop episodes from the queue
//    into Postgres, enqueued by `scheduler enqueue` (traced too when on), with the rule agent and
//    with the LLM agent against the fake OpenAI-compatible server (0 ms per call, so the governor
//    and the GenAI spans are all there is of the LLM); off and on alternate, round after round.
//    Rate = episodes ÷ first start to last finish in Postgres; CPU = the worker process's.
// 2. Each span helper of @benchfleet/telemetry timed per call, beside the bare body it wraps:
//    "caller ns/op" is the time inside the helpers, the median of the rounds, with the exports
//    between batches left out; "CPU ns/op" is this process's CPU time over the whole run of that
//    helper, the batch exports (serializing, sending) included.
//
//   npx tsx bench/telemetry-overhead.ts [--episodes 2000] [--llm-episodes 400] [--worker-rounds 2]
//                                       [--ops 100000] [--rounds 5] [--skip-worker] [--skip-helpers]

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import {
  startTelemetry,
  telemetryConfigFromEnv,
  type AttemptSpan,
  type LlmCallEnd,
  type LlmCallStart,
  type StepAttributes,
  type Telemetry,
} from '@benchfleet/telemetry';
import { startFakeLlm, startScript, waitFor, type StartedProcess } from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { benchServices, enqueueWithBuild, printTable } from './bench-services.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
    episodes: { type: 'string', default: '2000' },
    'llm-episodes': { type: 'string', default: '400' },
    'worker-rounds': { type: 'string', default: '2' },
    'skip-worker': { type: 'boolean', default: false },
    'skip-helpers': { type: 'boolean', default: false },
  },
});
const ops = Number(values.ops);
const rounds = Number(values.rounds);
/** Spans per timed batch: under the batch processor's export size (512), so no export starts inside one. */
const BATCH = 500;

const ATTEMPT = {
  runId: 'run-1',
  taskId: 'task-1',
  attempt: 1,
  benchmark: 'webshop',
  domain: 'fashion',
  workerId: 'worker-1',
};
const STEP: StepAttributes = { step: 3, actionKind: 'click', latencyMs: 12, tokensIn: 800 };
const CALL: LlmCallStart = {
  baseUrl: 'https://api.openai.com/v1',
  model: 'gpt-4o-mini',
  maxTokens: 256,
  temperature: 0,
  keyFingerprint: 'a1b2c3d4e5f6',
  attribution: { runId: 'run-1', taskId: 'task-1', attempt: 1 },
};
const END: LlmCallEnd = {
  outcome: 'ok',
  inputTokens: 812,
  outputTokens: 31,
  responseModel: 'gpt-4o-mini-2024-07-18',
  finishReasons: ['stop'],
  costUsd: 0.00014,
  waitedMs: 2,
};
const body = async (): Promise<number> => 1;

/** Each helper as a caller uses it; `spans` is how many spans one call makes. */
const helpers: { name: string; spans: number; run: (t: Telemetry) => unknown }[] = [
  { name: 'bare async body (no helper)', spans: 0, run: () => body() },
  { name: 'attemptSpan(attrs, body)', spans: 1, run: (t) => t.attemptSpan(ATTEMPT, body) },
  {
    name: 'stepSpan(parent, attrs, body)',
    spans: 1,
    run: (t) => t.stepSpan(undefined, STEP, body),
  },
  { name: 'recordStep(parent, attrs)', spans: 1, run: (t) => t.recordStep(undefined, STEP) },
  { name: 'startLlmCall(...).end(...)', spans: 1, run: (t) => t.startLlmCall(CALL).end(END) },
  { name: 'within(parent, fn)', spans: 0, run: (t) => t.within(undefined, () => 1) },
  {
    name: 'attempt: 5 recorded steps, 5 LLM calls',
    spans: 11,
    run: (t) =>
      t.attemptSpan(ATTEMPT, async (attempt: AttemptSpan) => {
        for (let step = 1; step <= 5; step += 1) {
          t.startLlmCall(CALL).end(END);
          attempt.recordStep({ ...STEP, step });
        }
      }),
  },
];

interface Measured {
  readonly callerNs: number;
  readonly cpuNs: number;
}

async function measure(telemetry: Telemetry, helper: (typeof helpers)[number]): Promise<Measured> {
  const perRound: number[] = [];
  const count = Math.max(1, Math.floor(ops / Math.max(1, helper.spans)));
  const perBatch = Math.max(1, Math.floor(BATCH / Math.max(1, helper.spans)));
  // Warm-up: the JIT, and the SDK's first export.
  for (let i = 0; i < perBatch; i += 1) await helper.run(telemetry);
  await telemetry.flush();
  const cpuStart = process.cpuUsage();
  for (let round = 0; round < rounds; round += 1) {
    let inside = 0n;
    for (let done = 0; done < count; done += perBatch) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < perBatch; i += 1) await helper.run(telemetry);
      inside += process.hrtime.bigint() - started;
      if (helper.spans > 0) await telemetry.flush();
    }
    perRound.push(Number(inside) / count);
  }
  const cpu = process.cpuUsage(cpuStart);
  perRound.sort((a, b) => a - b);
  return {
    callerNs: perRound[Math.floor(perRound.length / 2)]!,
    cpuNs: ((cpu.user + cpu.system) * 1000) / (count * rounds),
  };
}

/** The @opentelemetry packages loaded so far (prom-client, loaded by the test kit, loads the API). */
const otelPackages = (): string[] => [
  ...new Set(
    Object.keys(createRequire(import.meta.url).cache)
      .map((path) => /node_modules\/(@opentelemetry\/[^/]+)/.exec(path)?.[1])
      .filter((name): name is string => name !== undefined),
  ),
];

/** The collector, in a process of its own: decoding is not the measured process's cost. */
interface CollectorProcess {
  readonly url: string;
  /** Spans it decoded so far. */
  spans(): Promise<number>;
  close(): Promise<void>;
}

async function startCollectorProcess(): Promise<CollectorProcess> {
  // It prints its URL, then the count of spans it decoded for each line it reads on stdin.
  const child: ChildProcess & { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream } =
    spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "import { startOtlpReceiver } from '@benchfleet/testing';" +
          "import { createInterface } from 'node:readline';" +
          'const r = await startOtlpReceiver(); console.log(r.url);' +
          'const lines = createInterface({ input: process.stdin });' +
          'lines.on("line", () => console.log(r.spans().length));' +
          'lines.on("close", async () => { await r.close(); });',
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ) as never;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  while (!output.includes('\n')) await once(child.stdout, 'data');
  const url = output.trim();
  return {
    url,
    async spans() {
      const before = output.length;
      child.stdin.write('count\n');
      while (!output.slice(before).includes('\n')) await once(child.stdout, 'data');
      return Number(output.slice(before).trim().split('\n')[0]);
    },
    async close() {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

/** CPU time (user + system) a process has used, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface WorkerMeasured {
  readonly rate: number;
  readonly cpuMsPerEpisode: number;
  readonly spansPerEpisode: number;
}

/** Part 1: episodes through a real worker process, tracing off or on. */
async function measureWorkerPath(): Promise<void> {
  const episodes = Number(values.episodes);
  const llmEpisodes = Number(values['llm-episodes']);
  const workerRounds = Number(values['worker-rounds']);
  const bench = await benchServices('telemetry');
  const llm = await startFakeLlm({ latencyMs: 0 });
  const collector = await startCollectorProcess();
  const indexCache = mkdtempSync(join(tmpdir(), 'bench-telemetry-cache-'));
  try {
    await importWebshopCatalog(
      bench.db,
      demoCatalogRequest({ seed: 0, products: 12_000, catalogId: 'bench' }),
    );
    const envOf = (traced: boolean): NodeJS.ProcessEnv => {
      const env: NodeJS.ProcessEnv = {};
      for (const [key, value] of Object.entries(bench.env))
        if (!key.startsWith('OTEL_')) env[key] = value;
      return {
        ...env,
        LOG_LEVEL: 'info',
        BENCHFLEET_INDEX_CACHE: indexCache,
        LLM_API_KEY: 'sk-bench',
        ...(traced && { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }),
      };
    };
    const startWorker = async (traced: boolean): Promise<StartedProcess> => {
      const worker = startScript(
        resolve('apps/worker-webshop/bin/worker-webshop.js'),
        [
          '--worker-id',
          `bench-${traced ? 'on' : 'off'}`,
          '--concurrency',
          '32',
          '--catalog',
          'bench',
        ],
        envOf(traced),
        false,
      );
      await waitFor(
        'the worker to be ready',
        () => {
          if (worker.child.exitCode !== null)
            throw new Error(`the worker exited: ${worker.output().slice(-2000)}`);
          return worker.output().includes('"worker ready"');
        },
        120_000,
        5,
      );
      return worker;
    };
    const play = async (
      traced: boolean,
      flags: Record<string, string>,
      count: number,
    ): Promise<WorkerMeasured> => {
      const worker = await startWorker(traced);
      try {
        const pid = worker.child.pid ?? 0;
        const cpuBefore = cpuMs(pid);
        const spansBefore = await collector.spans();
        const runId = await enqueueWithBuild(resolve('.'), envOf(traced), {
          catalog: 'bench',
          // The same goals in every run, off and on: the same work, each time by a fresh worker.
          goals: `0-${count - 1}`,
          ...flags,
        });
        await waitFor(
          `run ${runId}`,
          async () => {
            const row = await bench.db
              .selectFrom('tasks')
              .select((eb) => eb.fn.countAll<number>().as('open'))
              .where('run_id', '=', runId)
              .where('status', 'in', ['queued', 'running'])
              .executeTakeFirstOrThrow();
            return Number(row.open) === 0;
          },
          30 * 60_000,
          25,
        );
        const cpu = cpuMs(pid) - cpuBefore;
        const span = await sql<{ seconds: number }>`
          select extract(epoch from max(finished_at) - min(started_at))::float8 as seconds
          from tasks where run_id = ${runId}
        `.execute(bench.db);
        // The worker's last spans are exported at its shutdown.
        worker.child.kill('SIGTERM');
        await worker.exited;
        const spans = (await collector.spans()) - spansBefore;
        return {
          rate: count / Number(span.rows[0]?.seconds),
          cpuMsPerEpisode: cpu / count,
          spansPerEpisode: spans / count,
        };
      } finally {
        // A run that fails to enqueue or to finish leaves no worker behind.
        if (worker.child.exitCode === null && worker.child.signalCode === null)
          worker.child.kill('SIGKILL');
      }
    };
    const setups: { name: string; flags: Record<string, string>; count: number }[] = [
      { name: 'rule agent', flags: { agent: 'rule' }, count: episodes },
      {
        name: 'LLM agent (fake, 0 ms/call)',
        flags: {
          agent: 'llm',
          llmBaseUrl: llm.baseUrl,
          llmModel: 'fake-model',
        },
        count: llmEpisodes,
      },
    ];
    const rows: Record<string, string | number>[] = [];
    for (const setup of setups) {
      if (setup.count <= 0) continue;
      const measured: Record<'off' | 'on', WorkerMeasured[]> = { off: [], on: [] };
      for (let round = 0; round < workerRounds; round += 1)
        for (const traced of round % 2 === 0 ? [false, true] : [true, false])
          measured[traced ? 'on' : 'off'].push(await play(traced, setup.flags, setup.count));
      const mean = (list: WorkerMeasured[], key: keyof WorkerMeasured): number =>
        list.reduce((sum, item) => sum + item[key], 0) / list.length;
      // The mean, and each round's figure: how far apart they are is the noise of the machine.
      const shown = (list: WorkerMeasured[], key: keyof WorkerMeasured, digits: number): string =>
        `${mean(list, key).toFixed(digits)} (${list.map((item) => item[key].toFixed(digits)).join(', ')})`;
      rows.push({
        setup: `${setup.name}, ${setup.count} episodes × ${workerRounds}`,
        'off episodes/s': shown(measured.off, 'rate', 0),
        'on episodes/s': shown(measured.on, 'rate', 0),
        'on ÷ off': (mean(measured.on, 'rate') / mean(measured.off, 'rate')).toFixed(3),
        'off CPU ms/episode': shown(measured.off, 'cpuMsPerEpisode', 2),
        'on CPU ms/episode': shown(measured.on, 'cpuMsPerEpisode', 2),
        'on spans/episode': mean(measured.on, 'spansPerEpisode').toFixed(1),
      });
    }
    process.stdout.write('The worker path (worker-webshop, 1 process, concurrency 32):\n');
    printTable(rows);
    process.stdout.write(
      `load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')} on ${cpus().length} cores\n\n`,
    );
  } finally {
    await collector.close();
    await llm.close();
    rmSync(indexCache, { recursive: true, force: true });
    await bench.close();
  }
}

/** Part 2: each span helper, per call. */
async function measureHelpers(): Promise<void> {
  const off = await startTelemetry(telemetryConfigFromEnv({}), { serviceName: 'bench' });
  const offResults: Measured[] = [];
  for (const helper of helpers) offResults.push(await measure(off, helper));
  const loadedWhileOff = otelPackages();

  // The collector in a process of its own: decoding is not this process's cost. It prints its URL,
  // and the spans it decoded when its stdin ends.
  const collector = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      "import { startOtlpReceiver } from '@benchfleet/testing';" +
        'const r = await startOtlpReceiver(); console.log(r.url);' +
        'process.stdin.resume().on("end", async () => { console.log(r.spans().length); await r.close(); });',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let collectorOutput = '';
  collector.stdout.on('data', (chunk: Buffer) => (collectorOutput += chunk.toString()));
  while (!collectorOutput.includes('\n')) await once(collector.stdout, 'data');
  const on = await startTelemetry(
    telemetryConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collectorOutput.trim() }),
    { serviceName: 'bench' },
  );
  const onResults: Measured[] = [];
  for (const helper of helpers) onResults.push(await measure(on, helper));
  const shutdown = await on.shutdown();
  collector.stdin.end();
  await once(collector, 'exit');
  const received = Number(collectorOutput.trim().split('\n').at(-1));

  const ns = (value: number): string => value.toFixed(value < 10 ? 1 : 0);
  printTable(
    helpers.map((helper, index) => ({
      helper: helper.name,
      'off caller ns/op': ns(offResults[index]!.callerNs),
      'off CPU ns/op': ns(offResults[index]!.cpuNs),
      'on caller ns/op': ns(onResults[index]!.callerNs),
      'on CPU ns/op': ns(onResults[index]!.cpuNs),
    })),
  );
  process.stdout.write(
    `\n${ops} spans per helper and round, ${rounds} rounds; Node ${process.version}; ` +
      `load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')} on ${cpus().length} cores\n` +
      `@opentelemetry packages loaded while off: ${loadedWhileOff.join(', ') || 'none'}\n` +
      `spans the receiver decoded while on: ${received} (shutdown completed: ${shutdown.completed})\n`,
  );
}

if (!values['skip-worker']) await measureWorkerPath();
if (!values['skip-helpers']) await measureHelpers();
