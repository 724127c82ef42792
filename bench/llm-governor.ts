// The LLM governor against a provider with a declared limit: 4 worker processes, 64 WebShop
// LLM-agent tasks in flight each (the real LlmAgent and retry policy), with the governor off
// (every process backs off on its own), on with the limit configured (--llm-rpm), and on with the
// limit unknown (learned from the provider's x-ratelimit-* headers and 429s).
//
//   npx tsx bench/llm-governor.ts [--rpm 1200] [--seconds 150] [--warmup-seconds 60] [--modes off,on,learned] [--phases shapes,throughput,spend]
//
// Phase `shapes` (issue 33): the same work — `--shape-calls` LLM calls (3 per task) from
// `--shape-processes` processes × `--tasks-in-flight` tasks — against a provider that counts
// `--shape-rpm` requests per minute in each of three ways (a sliding 60 s log, fixed windows of
// the clock's minutes, a token bucket of a minute's limit), answering in 200–800 ms, 429 with
// Retry-After past its limit and OpenAI's x-ratelimit headers. On each shape, in one run: an
// ungoverned fleet (each process backs off on its own), the governor told the limit and the
// shape (--llm-rpm, --llm-window), and the governor told nothing (the limit learned from the
// headers): time from the first call's arrival to the last's, and 429s. Every fleet starts at the
// same second of the clock's minute (a fixed window's next minute is as far for each).
//
// The fake provider counts requests in any 60 s span (a sliding log) and answers 429 with
// Retry-After past its limit. Throughput is measured over whole minutes after the warm-up (the
// first minute lets a burst of a whole minute's limit through to anyone). Then a spend phase: a run limit that the
// fleet reaches mid-way, its overshoot compared with one call per task in flight (governor on: the
// run's limit reaches every call through the governor's budgetOf, as workers pass runs.limits).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { provisionServices } from '@benchfleet/local-services';
import { LlmGovernor } from '@benchfleet/llm-governor';
import { startFakeLlm, type FakeLlm } from '@benchfleet/testing';
import { deleteKeysWithPrefix } from '@benchfleet/testing/test-database';
import { printTable } from './bench-services.js';

const { values } = parseArgs({
  options: {
    rpm: { type: 'string', default: '1200' },
    seconds: { type: 'string', default: '180' },
    'warmup-seconds': { type: 'string', default: '60' },
    modes: { type: 'string', default: 'off,on,learned' },
    processes: { type: 'string', default: '4' },
    'tasks-in-flight': { type: 'string', default: '64' },
    'spend-rpm': { type: 'string', default: '6000' },
    'spend-seconds': { type: 'string', default: '40' },
    phases: { type: 'string', default: 'shapes' },
    shapes: { type: 'string', default: 'sliding,fixed,bucket' },
    'shape-rpm': { type: 'string', default: '600' },
    'shape-calls': { type: 'string', default: '900' },
    'shape-processes': { type: 'string', default: '3' },
  },
});
const rpm = Number(values.rpm);
const seconds = Number(values.seconds);
const warmupSeconds = Number(values['warmup-seconds']);
const processes = Number(values.processes);
const tasksInFlight = Number(values['tasks-in-flight']);
const WORKER = fileURLToPath(new URL('./llm-governor-worker.ts', import.meta.url));

interface WorkerSummary {
  name: string;
  tasks: number;
  succeeded: number;
  infraFailed: number;
  budgetStopped: number;
  agentFailed: number;
  localSpendUsd: number;
}

async function runFleet(
  mode: 'off' | 'on' | 'learned',
  fake: FakeLlm,
  redisUrl: string,
  prefix: string,
  extra: Record<string, string>,
  fleetSize = processes,
  startAtSecond?: number,
): Promise<WorkerSummary[]> {
  const children: ChildProcessWithoutNullStreams[] = [];
  const summaries: Promise<WorkerSummary>[] = [];
  for (let i = 0; i < fleetSize; i += 1) {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        MODE: mode === 'off' ? 'off' : 'on',
        NAME: `w${i}`,
        FAKE_BASE_URL: fake.baseUrl,
        REDIS_URL: redisUrl,
        PREFIX: prefix,
        TASKS_IN_FLIGHT: String(tasksInFlight),
        ...(mode === 'on' && { RPM: String(extra.RPM ?? rpm) }),
        ...extra,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
    summaries.push(
      new Promise((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('exit', (code) => {
          const line = out.split('\n').find((l) => l.startsWith('{'));
          if (code === 0 && line) resolve(JSON.parse(line) as WorkerSummary);
          else reject(new Error(`worker w${i} exited ${code}: ${err}`));
        });
      }),
    );
  }
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          const onData = (chunk: Buffer): void => {
            if (chunk.toString().includes('ready')) {
              child.stdout.off('data', onData);
              resolve();
            }
          };
          child.stdout.on('data', onData);
        }),
    ),
  );
  if (startAtSecond !== undefined) {
    // Every fleet starts at the same second of the clock's minute: a fixed-window provider's wait
    // for its next minute is then the same for each.
    const waitMs = (startAtSecond * 1000 - (Date.now() % 60_000) + 60_000) % 60_000;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  for (const child of children) child.stdin.write('go\n');
  return Promise.all(summaries);
}

const pct = (part: number, whole: number): string =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(2)} %`;

/** The second of the clock's minute each fleet of phase `shapes` starts at. */
const START_AT_SECOND = 20;

/**
 * The least time from the first call's arrival to the last's that the provider allows for `calls`
 * calls, whoever sends them: a sliding log lets `limit` through, then the next `limit` a span after
 * each; fixed windows let `limit` through per window of the clock (the first one already begun at
 * `firstAt`); a full bucket lets `limit` through at once, then refills at `limit` per span.
 */
function providerFloorS(
  shape: 'sliding' | 'fixed' | 'bucket',
  calls: number,
  limit: number,
  firstAt: number,
): number {
  const span = 60_000;
  const windows = Math.ceil(calls / limit) - 1;
  if (windows <= 0) return 0;
  if (shape === 'sliding') return (windows * span) / 1000;
  if (shape === 'fixed') return (span - (firstAt % span) + (windows - 1) * span) / 1000;
  return ((calls - limit) * span) / limit / 1000;
}

/** Each provider shape with an ungoverned fleet, the governor told the limit and shape, and learning. */
async function runShapes(redisUrl: string): Promise<void> {
  const shapeRpm = Number(values['shape-rpm']);
  const calls = Number(values['shape-calls']);
  const fleetSize = Number(values['shape-processes']);
  const steps = 3;
  const tasksPerProcess = Math.ceil(calls / steps / fleetSize);
  const modes = values.modes.split(',') as ('off' | 'on' | 'learned')[];
  const rows: Record<string, string | number>[] = [];
  for (const shape of values.shapes.split(',') as ('sliding' | 'fixed' | 'bucket')[]) {
    let ungovernedS: number | undefined;
    for (const mode of modes) {
      const prefix = `{bench-gov-${randomBytes(3).toString('hex')}}`;
      const fake = await startFakeLlm({
        latencyMs: 200,
        latencyMaxMs: 800,
        script: ['Action: search[red mug]'],
        rateLimit: { requestsPerMinute: shapeRpm, shape },
      });
      process.stderr.write(
        `${shape} provider, governor ${mode}: ${fleetSize} processes × ${tasksInFlight} tasks, ${tasksPerProcess * fleetSize * steps} calls\n`,
      );
      const started = Date.now();
      const summaries = await runFleet(
        mode,
        fake,
        redisUrl,
        prefix,
        {
          DURATION_MS: String(30 * 60_000),
          TASKS: String(tasksPerProcess),
          STEPS: String(steps),
          ...(mode === 'on' && { RPM: String(shapeRpm), WINDOW: shape }),
        },
        fleetSize,
        START_AT_SECOND,
      );
      // From the first request's arrival to the last's: the processes' start-up (seconds under load) left out.
      const times = fake.arrivals.map((a) => a.at);
      const wallS = (Date.now() - started) / 1000;
      const answeredS = (Math.max(...times) - Math.min(...times)) / 1000;
      if (mode === 'off') ungovernedS = answeredS;
      const floorS = providerFloorS(shape, fake.stats.completions, shapeRpm, Math.min(...times));
      const failed = summaries.reduce((sum, s) => sum + s.infraFailed + s.agentFailed, 0);
      rows.push({
        provider: shape,
        governor: mode === 'on' ? `told (${shapeRpm}/min, ${shape})` : mode,
        calls: fake.stats.completions,
        requests: fake.arrivals.length,
        '429s': fake.stats.rateLimited,
        '429 %': pct(fake.stats.rateLimited, fake.arrivals.length),
        'last call s': answeredS.toFixed(1),
        '× ungoverned': ungovernedS === undefined ? 'n/a' : (answeredS / ungovernedS).toFixed(3),
        'floor s': floorS.toFixed(1),
        '× floor': floorS === 0 ? 'n/a' : (answeredS / floorS).toFixed(3),
        'tasks failed': failed,
        'wall s': wallS.toFixed(1),
      });
      await fake.close();
      await deleteKeysWithPrefix(redisUrl, prefix);
    }
  }
  process.stdout.write(
    `\nprovider shapes: ${shapeRpm} requests/min, answers in 200–800 ms, ${fleetSize} processes × ${tasksInFlight} tasks in flight, ${steps} LLM calls per task, ${cpus().length} cores (shared); "last call s": from the first request's arrival to the last's; "floor s": the least the provider allows for the calls made\n`,
  );
  printTable(rows);
}

async function main(): Promise<void> {
  const services = await provisionServices({ log: (line) => process.stderr.write(`${line}\n`) });
  const rows: Record<string, string | number>[] = [];
  try {
    const phases = values.phases.split(',');
    if (phases.includes('shapes')) await runShapes(services.redisUrl);
    const modes = phases.includes('throughput')
      ? (values.modes.split(',') as ('off' | 'on' | 'learned')[])
      : [];
    for (const mode of modes) {
      const prefix = `{bench-gov-${randomBytes(3).toString('hex')}}`;
      const fake = await startFakeLlm({
        latencyMs: 200,
        script: ['Action: search[red mug]'],
        rateLimit: { requestsPerMinute: rpm },
      });
      process.stderr.write(
        `mode ${mode}: ${processes} processes × ${tasksInFlight} tasks, ${seconds} s\n`,
      );
      const started = Date.now();
      const summaries = await runFleet(mode, fake, services.redisUrl, prefix, {
        DURATION_MS: String(seconds * 1000),
      });
      const wallS = (Date.now() - started) / 1000;
      const arrivals = fake.arrivals;
      const steadyFrom = started + warmupSeconds * 1000;
      // Whole minutes only: against a 60 s sliding limit, a span of k minutes holds at most k limits.
      const steadyTo =
        steadyFrom + 60_000 * Math.max(1, Math.floor((seconds - warmupSeconds) / 60));
      const steady = arrivals.filter(
        (a) => a.at >= steadyFrom && a.at < steadyTo && a.status === 200,
      );
      const steadyMinutes = (steadyTo - steadyFrom) / 60_000;
      const total = summaries.reduce(
        (sum, s) => ({
          tasks: sum.tasks + s.tasks,
          succeeded: sum.succeeded + s.succeeded,
          infraFailed: sum.infraFailed + s.infraFailed,
          agentFailed: sum.agentFailed + s.agentFailed,
        }),
        { tasks: 0, succeeded: 0, infraFailed: 0, agentFailed: 0 },
      );
      rows.push({
        governor: mode,
        requests: arrivals.length,
        '429s': fake.stats.rateLimited,
        '429 % of calls': pct(fake.stats.rateLimited, arrivals.length),
        'throughput after warm-up': `${(steady.length / steadyMinutes).toFixed(0)}/min`,
        '% of limit': pct(steady.length / steadyMinutes, rpm),
        'requests/task': (arrivals.length / Math.max(1, total.succeeded)).toFixed(2),
        tasks: total.tasks,
        succeeded: total.succeeded,
        'infra-failed (provider)': total.infraFailed,
        'agent failures': total.agentFailed,
        'wall s': wallS.toFixed(0),
      });
      await fake.close();
      await deleteKeysWithPrefix(services.redisUrl, prefix);
    }
    if (rows.length > 0) {
      process.stdout.write(
        `\nprovider limit ${rpm} requests/min (sliding 60 s), ${processes} processes × ${tasksInFlight} tasks in flight, 3 LLM calls per task, 200 ms per answer, ${cpus().length} cores (shared)\n`,
      );
      printTable(rows);
    }
    if (!phases.includes('spend')) return;

    // Spend: a run limit reached mid-way; overshoot against one call per task in flight.
    const spendRpm = Number(values['spend-rpm']);
    const spendRows: Record<string, string | number>[] = [];
    for (const mode of ['off', 'on'] as const) {
      const prefix = `{bench-gov-${randomBytes(3).toString('hex')}}`;
      const fake = await startFakeLlm({
        latencyMs: 200,
        script: ['Action: search[red mug]'],
        rateLimit: { requestsPerMinute: spendRpm },
      });
      // $1000 per million tokens: a call of ~270 tokens costs ~$0.27; the limit lets ~900 calls through.
      const budget = 250;
      const summaries = await runFleet(mode, fake, services.redisUrl, prefix, {
        DURATION_MS: String(Number(values['spend-seconds']) * 1000),
        RUN_BUDGET_USD: String(budget),
        RPM: String(spendRpm),
      });
      const costs = fake.received.length;
      const observer = new LlmGovernor({ redisUrl: services.redisUrl, prefix });
      const counted = mode === 'on' ? await observer.runSpend('bench-run') : undefined;
      await observer.close();
      const spent = counted?.usd ?? summaries.reduce((sum, s) => sum + s.localSpendUsd, 0);
      const perCall = spent / Math.max(1, costs);
      const overshootCalls = Math.max(0, (spent - budget) / perCall);
      spendRows.push({
        governor: mode,
        'run limit': `$${budget}`,
        spent: `$${spent.toFixed(2)}`,
        calls: costs,
        'overshoot $': `$${Math.max(0, spent - budget).toFixed(2)}`,
        'overshoot calls': overshootCalls.toFixed(1),
        'bound (tasks in flight)': processes * tasksInFlight,
        'tasks stopped by budget': summaries.reduce((sum, s) => sum + s.budgetStopped, 0),
      });
      await fake.close();
      await deleteKeysWithPrefix(services.redisUrl, prefix);
    }
    process.stdout.write(
      `\nspend limit per run (off: each process can only check the spend it saw itself)\n`,
    );
    printTable(spendRows);
  } finally {
    await services.stop();
  }
}

await main();
