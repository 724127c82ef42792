// A process of the fleet as telemetry sees it, for src/telemetry.test.ts: starts tracing from its own
// environment (the standard OTEL_* variables), runs attempts with steps and LLM calls, shuts
// tracing down and reports on stdout, one JSON line each. Logs go to stderr.
//   SCENARIO=work      an attempt with steps and LLM calls (one relayed from an HTTP handler), a
//                      failed attempt, then shutdown
//   SCENARIO=failing   work, flushed three times against a collector that refuses, then shutdown
//   SCENARIO=held      waits for `go` on stdin after starting an export, then as `work`
// Every scenario ends with `{"event":"done", "shutdown": …, "otelModules": […]}`.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { createLogger } from '@benchfleet/core';
import { startTelemetry, telemetryConfigFromEnv } from '../src/index.js';

const emit = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(event)}\n`);
};
const scenario = process.env.SCENARIO ?? 'work';

class EpisodeCrashed extends Error {
  override readonly name = 'EpisodeCrashed';
}

const telemetry = await startTelemetry(telemetryConfigFromEnv(process.env), {
  serviceName: 'telemetry-test-process',
  resourceAttributes: { 'service.instance.id': 'worker-a' },
  logger: createLogger({ level: 'info', name: 'telemetry-test-process' }),
  ...(process.env.SHUTDOWN_TIMEOUT_MS && {
    shutdownTimeoutMs: Number(process.env.SHUTDOWN_TIMEOUT_MS),
  }),
});
emit({ event: 'started', enabled: telemetry.enabled });

// The OSWorld relay's shape: LLM calls served by an HTTP handler, outside the attempt's context.
let relayParent: Parameters<typeof telemetry.within>[0];
const relay = createServer((req, res) => {
  const model = new URL(req.url ?? '/', 'http://relay').searchParams.get('model') ?? '';
  const serve = (): void => {
    telemetry
      .startLlmCall({ baseUrl: 'http://10.0.0.7:8000/v1', model })
      .end({ outcome: 'failed', errorType: 'TIMEOUT' });
  };
  if (model === 'relayed-linked') telemetry.within(relayParent, serve);
  else serve();
  res.end('ok');
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayPort = (relay.address() as { port: number }).port;

async function work(): Promise<void> {
  const attribution = { runId: 'run-1', taskId: 'task-7', attempt: 2 };
  const result = await telemetry.attemptSpan(
    { ...attribution, benchmark: 'webshop', domain: 'fashion', workerId: 'worker-a' },
    async (attempt) => {
      relayParent = attempt.parent;
      await telemetry.stepSpan(undefined, { step: 1, actionKind: 'search' }, async (step) => {
        telemetry
          .startLlmCall({
            baseUrl: 'https://api.openai.com/v1',
            model: 'gpt-4o-mini',
            maxTokens: 64,
            temperature: 0.5,
            keyFingerprint: 'a1b2c3d4e5f6',
            attribution,
          })
          .end({
            outcome: 'ok',
            inputTokens: 20,
            outputTokens: 7,
            responseModel: 'gpt-4o-mini-2024-07-18',
            responseId: 'chatcmpl-1',
            finishReasons: ['stop'],
            costUsd: 0.0001,
            waitedMs: 3,
          });
        step.set({ tokensIn: 20, tokensOut: 7 });
      });
      attempt.recordStep({ step: 2, actionKind: 'click', latencyMs: 25, reward: 0 });
      telemetry
        .startLlmCall({ baseUrl: 'http://127.0.0.1:9/v1', model: 'local-model' })
        .end({ outcome: 'rate-limited', errorType: '429' });
      for (const model of ['relayed-linked', 'relayed-unlinked'])
        await fetch(`http://127.0.0.1:${relayPort}/?model=${model}`).then((r) => r.text());
      attempt.setOutcome({
        status: 'success',
        success: true,
        reward: 1,
        totalSteps: 2,
        tokensIn: 20,
        tokensOut: 7,
        costUsd: 0.0001,
      });
      return 'episode result';
    },
  );
  emit({ event: 'attempt', result });

  // A crash: the span says so with the error's class, its message without the key it quoted.
  await telemetry
    .attemptSpan({ ...attribution, attempt: 3, benchmark: 'webshop', workerId: 'worker-a' }, () =>
      Promise.reject(new EpisodeCrashed('provider said: bad key sk-test-secret-0123456789')),
    )
    .catch((error: unknown) => emit({ event: 'crashed', name: (error as Error).name }));
  // An infra fault the attempt recorded before throwing: its outcome is what the span says.
  await telemetry
    .attemptSpan(
      { ...attribution, attempt: 4, benchmark: 'osworld', workerId: 'worker-a' },
      async (attempt) => {
        attempt.setOutcome({
          status: 'error',
          errorClass: 'infra',
          totalSteps: 0,
          error: 'Bytebot unreachable at http://admin:hunter2@bytebot:9991',
        });
        throw new Error('handed back');
      },
    )
    .catch(() => emit({ event: 'handed back' }));
}

if (scenario === 'held') {
  // An export the collector takes and never answers, in flight while the attempt runs.
  telemetry.recordStep(undefined, { step: 0, actionKind: 'warm-up' });
  void telemetry.flush();
  emit({ event: 'exporting' });
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() !== 'go') return;
      lines.close();
      resolve();
    });
  });
}
await work();
if (scenario === 'failing')
  for (let round = 0; round < 3; round += 1) {
    telemetry.recordStep(undefined, { step: round, actionKind: 'more' });
    await telemetry.flush();
  }
emit({ event: 'worked' });
const shutdown = await telemetry.shutdown();
relay.close();
// The OpenTelemetry packages are CommonJS: whatever of them was imported is in the require cache.
emit({
  event: 'done',
  shutdown,
  otelModules: Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    path.includes('@opentelemetry'),
  ),
});
