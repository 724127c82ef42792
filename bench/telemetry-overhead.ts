// What tracing costs a caller: each span helper of @benchfleet/telemetry timed per call with
// tracing off (the default: no endpoint, nothing of OpenTelemetry loaded) and on (the SDK
// exporting over OTLP/HTTP protobuf to the test kit's receiver in a process of its own), beside
// the bare body it wraps.
//
//   npx tsx bench/telemetry-overhead.ts [--ops 100000] [--rounds 5]
//
// "caller ns/op" is the time inside the helpers, the median of the rounds, with the exports
// between batches left out; "CPU ns/op" is this process's CPU time over the whole run of that
// helper, the batch exports (serializing, sending) included.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  startTelemetry,
  telemetryConfigFromEnv,
  type AttemptSpan,
  type LlmCallEnd,
  type LlmCallStart,
  type StepAttributes,
  type Telemetry,
} from '@benchfleet/telemetry';
import { printTable } from './bench-services.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '5' },
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
