import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  writeGradedOsworldRun,
  type FixtureGradedTask,
} from '@benchfleet/osworld/graded-run-fixture';
import { OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import { runCli, useTestServices } from '@benchfleet/testing';

// Both scores everywhere, as a user reads them: `status`, `aggregate`, `compare` and the exports
// of graded runs show the grade beside the agent's word; an ungraded run's outputs have no trace
// of grading (its byte-for-byte outputs are held by the existing export and summary tests).

const services = useTestServices();
let scratch: string;
const GRADED_A = 'graded-a';
const GRADED_B = 'graded-b';
const PLAIN = 'plain-run';
const runA: FixtureGradedTask[] = [
  { taskId: 'right', domain: 'os', finalApiStatus: 'COMPLETED', grade: { score: 1 } },
  { taskId: 'liar', domain: 'os', finalApiStatus: 'COMPLETED', grade: { score: 0 } },
  { taskId: 'gave-up', domain: 'vs_code', finalApiStatus: 'NEEDS_HELP', grade: { score: 1 } },
  {
    taskId: 'raised',
    domain: 'vs_code',
    finalApiStatus: 'FAILED',
    grade: { noScore: 'FileNotFoundError: settings.json' },
  },
];
// B: the liar is right this time, and the one that gave up scores 0.5.
const runB: FixtureGradedTask[] = runA.map((task) =>
  task.taskId === 'liar'
    ? { ...task, grade: { score: 1 } }
    : task.taskId === 'gave-up'
      ? { ...task, grade: { score: 0.5 } }
      : task,
);

const scheduler = (args: string[]) => runCli('scheduler', args, services.env, 600_000);

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'graded-outputs-'));
  await writeGradedOsworldRun(services.db, { id: GRADED_A }, runA);
  await writeGradedOsworldRun(services.db, { id: GRADED_B }, runB);
  await writeGradedOsworldRun(
    services.db,
    { id: PLAIN, graded: false },
    runA.map((task) => ({ ...task, grade: null })),
  );
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('a graded run, everywhere', () => {
  it('status: the grade beside the agent-reported counts, in text and JSON', async () => {
    const text = await scheduler(['status', GRADED_A]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `  graded: mean score 0.6667 over 3 scored task(s) (1 without a score); graded success 66.7% vs agent-reported success 66.7%; ` +
        `claimed × graded: 1 claimed and passed, 1 claimed but failed, 1 unclaimed but passed, 0 unclaimed and failed; ` +
        `fidelity 4 graded, 0 degraded, 0 ungraded; ${OSWORLD_GRADING_VERSION}\n`,
    );
    const json = await scheduler(['status', GRADED_A, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      run: { succeeded: 2, total: 4 },
      graded: { mean_score: 0.6667, scored: 3, no_score: 1 },
    });

    const plain = await scheduler(['status', PLAIN, '--json']);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('graded');
    expect((await scheduler(['status', PLAIN])).stdout).not.toContain('graded');
  });

  it('aggregate: every summary field as before, and a graded object beside them; the report shows both', async () => {
    const out = join(scratch, 'summary.json');
    const markdown = join(scratch, 'summary.md');
    const result = await scheduler(['aggregate', GRADED_A, '--out', out, '--markdown', markdown]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(await readFile(out, 'utf8')) as Record<string, unknown>;
    const plain = JSON.parse((await scheduler(['aggregate', PLAIN])).stdout) as Record<
      string,
      unknown
    >;
    // The same keys in the same order, `graded` last; the agent's numbers untouched by the grade.
    expect(Object.keys(summary)).toEqual([...Object.keys(plain), 'graded']);
    expect(summary['summary']).toEqual({ ...(plain['summary'] as object) });
    expect(summary['graded']).toMatchObject({
      mean_score: 0.6667,
      graded_success_rate: 0.6667,
      claimed_success_rate: 0.6667,
      claimed_vs_graded: { claimed_and_passed: 1, claimed_but_failed: 1, unclaimed_but_passed: 1 },
      fidelity: { graded: 4, degraded: 0, ungraded: 0 },
      per_domain: { os: { mean_score: 0.5 }, vs_code: { mean_score: 1 } },
    });
    const report = await readFile(markdown, 'utf8');
    expect(report).toContain(`## Graded (${OSWORLD_GRADING_VERSION})`);
    expect(report).toContain('| claimed success | 1 | 1 |');
    expect(report).toContain('| no claim | 1 | 0 |');
    expect(plain).not.toHaveProperty('graded');
  });

  it('compare: the graded score as a compared metric when both runs are graded', async () => {
    const text = await scheduler(['compare', GRADED_A, GRADED_B]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /graded \(graded score: .*\): 3 tasks scored in both runs \(1 settled in both left out: no score in one\)/,
    );
    expect(text.stdout).toMatch(/graded success rate +66\.7% +66\.7% +\+0\.0 pp/);
    expect(text.stdout).toMatch(/graded mean score +0\.6667 +0\.8333 +\+0\.1667/);
    const json = JSON.parse((await scheduler(['compare', GRADED_A, GRADED_B, '--json'])).stdout);
    expect(json.graded).toMatchObject({
      paired: 3,
      without_score: 1,
      table: { both_pass: 1, only_a: 1, only_b: 1, neither: 0 },
    });
    // One graded, one not: compared on the agent's word only, as before.
    const mixed = JSON.parse((await scheduler(['compare', GRADED_A, PLAIN, '--json'])).stdout);
    expect(mixed).not.toHaveProperty('graded');
    const mixedText = (await scheduler(['compare', GRADED_A, PLAIN])).stdout;
    expect(mixedText).toContain('success rate');
    expect(mixedText).not.toMatch(/^graded \(|graded mean score/m);
  });

  it('osworld-logs: result.json keeps the original fields and adds graded; final.json adds graded', async () => {
    const out = join(scratch, 'logs');
    const result = await scheduler(['export', GRADED_A, '--format', 'osworld-logs', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const liar = JSON.parse(await readFile(join(out, 'liar', 'result.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(Object.keys(liar)).toEqual([
      'task_id',
      'domain',
      'instruction',
      'bytebot_task_id',
      'status',
      'final_api_status',
      'total_steps',
      'start_time',
      'end_time',
      'duration_seconds',
      'error_message',
      'graded',
    ]);
    expect(liar).toMatchObject({
      status: 'success',
      final_api_status: 'COMPLETED',
      graded: { score: 0, success: false, fidelity: 'graded', final_signal: 'DONE' },
    });
    // OSWorld's float score written as Python writes it.
    expect(await readFile(join(out, 'right', 'result.json'), 'utf8')).toContain('"score": 1.0,');
    const finalJson = JSON.parse(await readFile(join(out, 'final.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(Object.keys(finalJson)).toEqual([
      'benchmark_config',
      'summary',
      'per_domain',
      'started_at',
      'finished_at',
      'total_duration_seconds',
      'tasks',
      'graded',
    ]);
    expect(finalJson['graded']).toMatchObject({ mean_score: 0.6667, scored: 3 });

    const plainOut = join(scratch, 'plain-logs');
    expect(
      (await scheduler(['export', PLAIN, '--format', 'osworld-logs', '--out', plainOut])).code,
    ).toBe(0);
    const plainFinal = await readFile(join(plainOut, 'final.json'), 'utf8');
    expect(plainFinal).not.toContain('graded');
    expect(await readFile(join(plainOut, 'liar', 'result.json'), 'utf8')).not.toContain('graded');
  });

  it("ATIF: each attempt's trajectory carries its grade in extra.benchfleet", async () => {
    const out = join(scratch, 'atif');
    const result = await scheduler(['export', GRADED_A, '--format', 'atif', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const trajectory = JSON.parse(
      await readFile(join(out, 'tasks', 'raised', 'attempt-1.json'), 'utf8'),
    ) as { extra: { benchfleet: Record<string, unknown> } };
    expect(trajectory.extra.benchfleet['outcome']).toMatchObject({ status: 'failed' });
    expect(trajectory.extra.benchfleet['grade']).toMatchObject({
      score: null,
      no_score_cause: 'exception',
      reason: 'FileNotFoundError: settings.json',
      details: { finalSignal: { bytebotStatus: 'FAILED' } },
    });
    const plainOut = join(scratch, 'plain-atif');
    expect((await scheduler(['export', PLAIN, '--format', 'atif', '--out', plainOut])).code).toBe(
      0,
    );
    const plain = JSON.parse(
      await readFile(join(plainOut, 'tasks', 'raised', 'attempt-1.json'), 'utf8'),
    ) as { extra: { benchfleet: Record<string, unknown> } };
    expect(plain.extra.benchfleet).not.toHaveProperty('grade');
  });
});
