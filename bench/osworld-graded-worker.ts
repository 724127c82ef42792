// Graded OSWorld through the real worker process (worker-osworld), with the stack's LLM relay:
// per task, what grading adds (setup + evaluation, reset excluded) and the reset's wait; per relayed
// call, what the relay and the governor add to the agent's wait (the fake provider answers at once).
//
//   npx tsx bench/osworld-graded-worker.ts [--tasks 30]
//
// Postgres and Redis are found as the demo finds them; a fresh database and queue prefix are used
// and dropped. One fake graded stack (fake Bytebot in proxy mode, its fake desktop, the fake OSWorld
// VM server, a fake web host for downloads), one fake provider, one worker process.

import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchmarks } from '@benchfleet/benchmarks';
import type { OsworldTask } from '@benchfleet/osworld';
import { JobProducer } from '@benchfleet/queue';
import { enqueueRun } from '@benchfleet/runs';
import {
  FAKE_LLM_PRICE,
  startCli,
  startFakeGradedStack,
  startFakeLlm,
  waitFor,
  waitForOutput,
  type StartedProcess,
} from '@benchfleet/testing';
import { benchServices, percentile, printTable } from './bench-services.js';

const POSTER_TASK = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
const POSTER_URL =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57/poster_party_night.webp';
const RESTORE_POSTER =
  'mv ~/.local/share/Trash/files/poster_party_night.webp ~/Desktop/poster_party_night.webp';
const MODEL = 'bench-model';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '30' } } });
const tasks = Number(values.tasks);
if (!Number.isInteger(tasks) || tasks < 1) throw new Error(`--tasks: expected a positive integer`);

const examples = new URL('../../shared/osworld/evaluation_examples/examples/', import.meta.url);
const file = JSON.parse(await readFile(new URL(`os/${POSTER_TASK}.json`, examples), 'utf8')) as {
  instruction: string;
  related_apps: string[];
  config: OsworldTask['config'];
  evaluator: Record<string, unknown>;
};
const spec = (): OsworldTask => ({
  task_id: POSTER_TASK,
  domain: 'os',
  instruction: file.instruction,
  snapshot: 'os',
  related_apps: file.related_apps,
  source: '',
  config: file.config,
  evaluator: file.evaluator,
  trajectory: 'trajectories/',
  proxy: false,
  fixed_ip: false,
  possibility_of_env_change: 'low',
});

const bench = await benchServices('osworld_graded_worker');
const scratch = await mkdtemp(path.join(tmpdir(), 'bench-graded-worker-'));
const producer = new JobProducer(bench.services.redisUrl, bench.prefix);
const llm = await startFakeLlm({ models: [MODEL], script: ['Looking at the screen.'] });
const relayPort = 40_000 + Math.floor(Math.random() * 20_000);
const stack = await startFakeGradedStack({
  scenario: {
    steps: 3,
    ending: { kind: 'completed', answer: 'Done.' },
    desktopCommands: { 2: RESTORE_POSTER },
  },
  vm: { apps: ['code', 'firefox', 'thunar'] },
  bytebot: { llmProxyUrl: `http://127.0.0.1:${relayPort}` },
});
stack.web.serve(POSTER_URL, 'RIFF....WEBPVP8 poster');
let worker: StartedProcess | undefined;
try {
  worker = startCli(
    'worker-osworld',
    [
      '--bytebot-url',
      stack.bytebot.url,
      '--desktop-url',
      stack.bytebotd.url,
      '--desktop-server-url',
      stack.vm.url,
      '--reset-command',
      stack.resetCommand,
      '--grading-cache',
      path.join(scratch, 'grading'),
      '--download-mirrors',
      stack.web.urlRewrites.map((r) => `${r.from}=${r.to}`).join(','),
      '--stack-id',
      'bench-graded',
    ],
    {
      ...bench.env,
      BENCHFLEET_ARTIFACTS: path.join(scratch, 'artifacts'),
      LLM_BASE_URL: llm.baseUrl,
      LLM_API_KEY: 'sk-bench',
      BENCHFLEET_LLM_RELAY_MODELS: MODEL,
      BENCHFLEET_LLM_RELAY_PORT: String(relayPort),
      LLM_PRICE_TABLE: JSON.stringify({ [MODEL]: FAKE_LLM_PRICE }),
      LOG_LEVEL: 'info',
    },
  );
  await waitForOutput(worker, 'worker ready', 'the worker to be ready');
  // Phase-1 grading knows tasks by their OSWorld id: one run per task, all enqueued at once.
  const planned = {
    benchmark: benchmarks.get('osworld'),
    name: 'bench-osworld-graded-worker',
    config: { source: 'bench', domains: ['os'], grade: true },
    model: null,
    agent: { kind: 'bytebot' },
    tasks: [{ taskId: POSTER_TASK, domain: 'os', instruction: file.instruction, spec: spec() }],
  };
  const started = Date.now();
  const runIds: string[] = [];
  for (let i = 0; i < tasks; i++)
    runIds.push(await enqueueRun({ db: bench.db, producer }, planned));
  await waitFor(
    'the runs to settle',
    async () => {
      const open = await bench.db
        .selectFrom('tasks')
        .select('task_id')
        .where('run_id', 'in', runIds)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      return open.length === 0;
    },
    tasks * 60_000,
    100,
  );
  const wallMs = Date.now() - started;
  const { rows: grades } = await sql<{
    score: number | null;
    setup: { timings: Record<string, number> };
  }>`
    select score, setup from osworld_grades where run_id in (${sql.join(runIds)})
  `.execute(bench.db);
  const { rows: steps } = await sql<{ latency_ms: number | null }>`
    select latency_ms from steps where run_id in (${sql.join(runIds)})
  `.execute(bench.db);
  const { rows: totals } = await sql<{ succeeded: number; cost: number }>`
    select count(*) filter (where status = 'success')::int as succeeded, sum(cost_usd)::float8 as cost
    from tasks where run_id in (${sql.join(runIds)})
  `.execute(bench.db);
  const overhead = grades.map((g) => g.setup.timings['setupMs']! + g.setup.timings['gradeMs']!);
  const reset = grades.map((g) => g.setup.timings['resetMs']! + g.setup.timings['readyMs']!);
  const relayed = steps.flatMap((s) => (s.latency_ms === null ? [] : [s.latency_ms]));
  printTable([
    {
      figure: 'tasks graded (score 1)',
      value: `${grades.filter((g) => g.score === 1).length}/${tasks}`,
    },
    { figure: 'agent-reported successes', value: totals[0]?.succeeded ?? 0 },
    {
      figure: 'grading per task p50 / p95 ms (setup + evaluation)',
      value: `${percentile(overhead, 50)} / ${percentile(overhead, 95)}`,
    },
    {
      figure: 'reset + ready per task p50 / p95 ms',
      value: `${percentile(reset, 50)} / ${percentile(reset, 95)}`,
    },
    {
      figure: 'relayed call, agent wait p50 / p95 ms (provider answers at once)',
      value: `${percentile(relayed, 50)} / ${percentile(relayed, 95)}`,
    },
    { figure: 'relayed calls with usage', value: relayed.length },
    {
      figure: 'run cost USD (tasks) / provider bill USD',
      value: `${(totals[0]?.cost ?? 0).toFixed(6)} / ${llm.billed().usd.toFixed(6)}`,
    },
    {
      figure: 'wall s, tasks/min',
      value: `${(wallMs / 1000).toFixed(1)}, ${((tasks * 60_000) / wallMs).toFixed(1)}`,
    },
  ]);
} finally {
  if (worker && worker.child.exitCode === null) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await stack.close();
  await llm.close();
  await producer.close();
  await bench.close();
  await rm(scratch, { recursive: true, force: true });
}
