import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import {
  osworldExampleTask,
  runCli,
  startCli,
  startFakeGradedStack,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeGradedStack,
  type StartedProcess,
} from '@benchfleet/testing';

// A graded run the way a user makes one, end to end: `scheduler enqueue --grade` (the graded
// worker is live, so the capability check lets it in), worker-osworld grades each task on the fake
// graded stack, then `status`, `aggregate` and `regrade` show the grade beside the agent's word.
// The agent lies twice: it says COMPLETED and leaves the desktop wrong.

const services = useTestServices();
const POSTER_TASK = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
const POSTER_URL =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57/poster_party_night.webp';
const INFEASIBLE_TASK = 'b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa';
let scratch: string;
let stack: FakeGradedStack;
let worker: StartedProcess;

const scheduler = (args: string[]) => runCli('scheduler', args, services.env, 600_000);

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'graded-cli-'));
  stack = await startFakeGradedStack({
    scenario: { steps: 2, ending: { kind: 'completed', answer: 'Done.' } },
  });
  stack.web.serve(POSTER_URL, 'RIFF....WEBPVP8 poster');
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
      stack.web.urlRewrites.map((rewrite) => `${rewrite.from}=${rewrite.to}`).join(','),
      '--stack-id',
      'stack-graded-cli',
      '--grace-s',
      '5',
    ],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: path.join(scratch, 'artifacts'),
      OSWORLD_VM_RETRY_DELAY_MS: '20',
      LOG_LEVEL: 'info',
    },
  );
  await waitForOutput(worker, 'worker ready', 'the graded worker to be ready');
});

afterAll(async () => {
  if (worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await stack.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('a graded run from the command line', () => {
  it('enqueue --grade → graded by the worker → status, aggregate and regrade show both words', async () => {
    const dataset = await writeOsworldTestDataset(scratch, 'liars', [
      await osworldExampleTask('os', POSTER_TASK),
      await osworldExampleTask('os', INFEASIBLE_TASK),
    ]);
    const enqueued = await scheduler([
      'enqueue',
      '--benchmark',
      'osworld',
      '--dataset',
      dataset,
      '--grade',
      '--max-steps',
      '20',
      '--json',
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const runId = (JSON.parse(enqueued.stdout) as { runId: string }).runId;

    const summary = await waitFor(
      'the run to be summarised with its grades',
      async () => {
        const row = await services.db
          .selectFrom('runs')
          .select(['summary', 'status'])
          .where('id', '=', runId)
          .executeTakeFirst();
        const stored = row?.summary as { pending?: number; graded?: unknown } | null | undefined;
        return stored?.pending === 0 && stored.graded ? stored : undefined;
      },
      600_000,
      100,
    );
    // Stored by the worker when the run settled: the agent said success twice, the grade says 0.
    expect(summary).toMatchObject({
      summary: { total_tasks: 2, succeeded: 2, success_rate: 1 },
      graded: {
        metric_versions: [OSWORLD_GRADING_VERSION],
        scored: 2,
        mean_score: 0,
        graded_success_rate: 0,
        claimed_success_rate: 1,
        claimed_vs_graded: { claimed_and_passed: 0, claimed_but_failed: 2 },
        fidelity: { graded: 2, degraded: 0, ungraded: 0 },
      },
    });

    const status = await scheduler(['status', runId]);
    expect(status.stdout).toContain(
      'graded: mean score 0 over 2 scored task(s) (0 without a score); graded success 0.0% vs agent-reported success 100.0%',
    );
    const aggregate = JSON.parse((await scheduler(['aggregate', runId])).stdout) as {
      graded: { claimed_vs_graded: { claimed_but_failed: number } };
    };
    expect(aggregate.graded.claimed_vs_graded.claimed_but_failed).toBe(2);

    const regrade = await scheduler(['regrade', runId]);
    expect(regrade.code, regrade.stderr).toBe(0);
    expect(regrade.stdout.trim().split('\n').at(-1)).toBe(
      '0 regraded (0 changed, 0 unchanged), 2 up to date, 0 not graded; mean score 0 -> 0',
    );
    const forced = await scheduler(['regrade', runId, '--force']);
    expect(forced.stdout.trim().split('\n').slice(1)).toEqual([
      `  = ${POSTER_TASK}: 0 (grade 2)`,
      `  = ${INFEASIBLE_TASK}: 0 (grade 2)`,
      '2 regraded (0 changed, 2 unchanged), 0 up to date, 0 not graded; mean score 0 -> 0',
    ]);
  });
});
