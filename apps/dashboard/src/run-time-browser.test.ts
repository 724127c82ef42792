import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import {
  startDashboardUnderTest,
  type DashboardUnderTest,
} from '../test-support/dashboard-under-test.js';
import {
  launchChromium,
  waitForText,
  type HeadlessChromium,
} from '../test-support/headless-chromium.js';

// Issue 32's dashboard views in Chromium, each checked against what the test reads back from SQL
// (not against the dashboard's own queries): the runs × tasks grid, per-phase time of a run and of
// a task (generic phases for WebShop, OSWorld's recorded ones for a graded attempt), and a run's
// timeline (attempts settled per bucket and the most running at once).

const services = useTestServices();
let sut: DashboardUnderTest;
let browser: HeadlessChromium;
let page: Page;
const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);

interface AttemptFixture {
  attempt: number;
  status: string;
  from: number;
  to: number;
  steps?: number[];
}

async function run(id: string, name: string, benchmark: string) {
  await sql`insert into runs (id, name, benchmark, status, config, code_version, started_at, created_at)
            values (${id}, ${name}, ${benchmark}, 'finished', '{}', 'test', ${at(0)}, ${at(0)})`.execute(
    services.db,
  );
}

async function task(
  runId: string,
  taskId: string,
  status: string,
  reward: number | null,
  attempts: AttemptFixture[] = [],
) {
  await sql`insert into tasks (run_id, task_id, seq, domain, instruction, status, attempts, reward, success)
            values (${runId}, ${taskId}, ${Number(taskId.replace(/\D/g, '') || 0)}, 'd', ${`do ${taskId}`},
                    ${status}, ${attempts.length}, ${reward},
                    ${['success', 'failed', 'error', 'cancelled'].includes(status) ? status === 'success' : null})`.execute(
    services.db,
  );
  for (const a of attempts) {
    await sql`insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status, started_at, finished_at)
              values (${runId}, ${taskId}, ${a.attempt}, 1, 'w', ${a.status}, ${at(a.from)}, ${at(a.to)})`.execute(
      services.db,
    );
    for (const [i, second] of (a.steps ?? []).entries())
      await sql`insert into steps (run_id, task_id, attempt, step, at)
                values (${runId}, ${taskId}, ${a.attempt}, ${i + 1}, ${at(second)})`.execute(
        services.db,
      );
  }
}

beforeAll(async () => {
  sut = await startDashboardUnderTest(services);
  await run('run-a', 'grid-alpha', 'webshop');
  await task('run-a', 't1', 'success', 1, [
    { attempt: 1, status: 'success', from: 0, to: 10, steps: [2, 7] },
  ]);
  await task('run-a', 't2', 'failed', 0.25, [
    { attempt: 1, status: 'error', from: 0, to: 1 },
    { attempt: 2, status: 'failed', from: 1, to: 21, steps: [16] },
  ]);
  await task('run-a', 't3', 'error', null, [{ attempt: 1, status: 'error', from: 5, to: 9 }]);
  await task('run-a', 't4', 'queued', null);
  await run('run-b', 'grid-beta', 'webshop');
  await task('run-b', 't1', 'failed', 0, [{ attempt: 1, status: 'failed', from: 0, to: 3 }]);
  await task('run-b', 't2', 'success', 1, [{ attempt: 1, status: 'success', from: 0, to: 3 }]);
  await task('run-b', 't5', 'cancelled', null);
  await run('run-os', 'grid-os', 'osworld');
  await task('run-os', 'os1', 'success', 1, [
    { attempt: 1, status: 'success', from: 0, to: 100, steps: [30, 90] },
  ]);
  await task('run-os', 'os2', 'failed', 0, [
    { attempt: 1, status: 'failed', from: 0, to: 50, steps: [40] },
  ]);
  // os1's attempt was graded: its own grade records the phases' durations.
  const timings = { resetMs: 3000, readyMs: 1000, setupMs: 5000, agentMs: 80000, gradeMs: 9000 };
  await sql`insert into osworld_grades (run_id, task_id, attempt, grade_no, metric_version, bytebot_status,
              final_signal_mapping, fidelity, score, python_type, details, setup)
            values ('run-os', 'os1', 1, 1, 'test', 'COMPLETED', 'DONE', 'graded', 1, 'float', '{}',
                    ${JSON.stringify({ reset: null, setup: null, timings })}::jsonb)`.execute(
    services.db,
  );
  await run('run-other', 'unrelated', 'webshop');
  await task('run-other', 't1', 'success', 1, [{ attempt: 1, status: 'success', from: 0, to: 1 }]);
  browser = await launchChromium();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await sut?.close();
});

const url = (path: string) => `${sut.dashboard.url}${path}`;

/** Postgres's percentile_cont: linear between the two closest ranks. */
function percentileCont(values: number[], fraction: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  const rank = fraction * (sorted.length - 1);
  const low = sorted[Math.floor(rank)] ?? 0;
  const high = sorted[Math.ceil(rank)] ?? 0;
  return low + (high - low) * (rank - Math.floor(rank));
}

async function gridCells(runIds: string[]) {
  const { rows } = await sql<{ run_id: string; task_id: string; status: string }>`
    select run_id, task_id, status from tasks where run_id in (${sql.join(runIds)})`.execute(
    services.db,
  );
  return rows;
}

describe('the runs × tasks grid', () => {
  it("shows every task of the runs a filter finds, each run's verdict linked to its task, and 'not run' where a run lacks the task", async () => {
    await page.goto(url('/grid?q=grid-'));
    await waitForText(page.locator('[data-count="grid"]'), '7 tasks × 3 runs');
    const heads = page.locator('.runs-grid-head [data-run]');
    expect(
      (await heads.evaluateAll((els) => els.map((el) => el.getAttribute('data-run')))).sort(),
    ).toEqual(['run-a', 'run-b', 'run-os']);
    const expected = await gridCells(['run-a', 'run-b', 'run-os']);
    const taskIds = [...new Set(expected.map((row) => row.task_id))];
    for (const taskId of taskIds) {
      for (const runId of ['run-a', 'run-b', 'run-os']) {
        const cell = page.locator(`[data-task="${taskId}"] [data-run="${runId}"]`);
        const row = expected.find((r) => r.task_id === taskId && r.run_id === runId);
        expect(await cell.locator('[data-status]').getAttribute('data-status')).toBe(
          row ? row.status : 'not-run',
        );
      }
    }
    expect(await page.locator('[data-status="not-run"]').count()).toBe(
      taskIds.length * 3 - expected.length,
    );
    // The reward is shown with the verdict, and the verdict opens the task.
    const verdict = page.locator('[data-task="t2"] [data-run="run-a"] a[data-epoch="1"]');
    expect(await verdict.textContent()).toContain('0.25');
    await verdict.click();
    await page.waitForURL('**/runs/run-a/tasks/t2');
  });

  it("shows a run's epochs of a task in one cell, each verdict opening its own sample", async () => {
    await run('run-epochs', 'epochs-two', 'webshop');
    await sql`update runs set epochs = 2 where id = 'run-epochs'`.execute(services.db);
    await task('run-epochs', 't1', 'success', 1);
    await task('run-epochs', 't1.epoch2', 'failed', 0);
    await sql`update tasks set base_task_id = 't1', epoch = 2
              where run_id = 'run-epochs' and task_id = 't1.epoch2'`.execute(services.db);
    await page.goto(url('/grid?run=run-epochs'));
    const cell = page.locator('[data-task="t1"] [data-run="run-epochs"]');
    await cell.locator('a[data-epoch="2"]').waitFor();
    expect(
      await cell
        .locator('a[data-epoch]')
        .evaluateAll((links) =>
          links.map((a) => [a.getAttribute('data-epoch'), a.getAttribute('data-status')]),
        ),
    ).toEqual([
      ['1', 'success'],
      ['2', 'failed'],
    ]);
    // One row per task of the benchmark, not per sample.
    expect(await page.locator('[data-task="t1.epoch2"]').count()).toBe(0);
    await cell.locator('a[data-epoch="2"]').click();
    await page.waitForURL('**/runs/run-epochs/tasks/t1.epoch2');
  });

  it('filters by benchmark, and takes runs named one by one in their order', async () => {
    await page.goto(url('/grid?q=grid-&benchmark=webshop'));
    await waitForText(page.locator('[data-count="grid"]'), '5 tasks × 2 runs');
    await page.goto(url('/grid?run=run-b&run=run-other'));
    await waitForText(page.locator('[data-count="grid"]'), '3 tasks × 2 runs');
    const order = await page
      .locator('.runs-grid-head [data-run]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-run')));
    expect(order).toEqual(['run-b', 'run-other']);
  });
});

/** The tasks of the runs each grid filter should keep, worked out in the test from SQL's rows. */
async function tasksEachFilterKeeps(runIds: string[]) {
  const rows = await gridCells(runIds);
  const byTask = new Map<string, typeof rows>();
  for (const row of rows) byTask.set(row.task_id, [...(byTask.get(row.task_id) ?? []), row]);
  const settled = ['success', 'failed', 'cancelled', 'error'];
  const keep = (test: (cells: typeof rows) => boolean) =>
    [...byTask]
      .filter(([, cells]) => test(cells))
      .map(([taskId]) => taskId)
      .sort();
  return {
    all: keep(() => true),
    // Single-epoch runs: a run's pass rate of a task is its one settled verdict.
    differ: keep(
      (cells) =>
        new Set(cells.filter((c) => settled.includes(c.status)).map((c) => c.status === 'success'))
          .size > 1,
    ),
    failed: keep((cells) => cells.some((c) => c.status === 'failed')),
    infra: keep((cells) => cells.some((c) => c.status === 'error')),
  };
}

describe('grid filters', () => {
  type Grid = { rows: Array<[string, unknown]>; total_tasks: number };
  const gridTasks = async (query: string) => {
    const response = await fetch(url(`/api/grid?run=run-a&run=run-b${query}`));
    expect(response.status).toBe(200);
    const grid = (await response.json()) as Grid;
    return { tasks: grid.rows.map(([taskId]) => taskId), total: grid.total_tasks };
  };

  it('the API keeps the tasks whose verdicts differ between runs, with a failed sample, with an infra error, or by text', async () => {
    const expected = await tasksEachFilterKeeps(['run-a', 'run-b']);
    // Each filter keeps some tasks and drops others, so each assertion below can fail.
    expect(expected.differ).toEqual(['t1', 't2']);
    expect(expected.infra).toEqual(['t3']);
    for (const show of ['all', 'differ', 'failed', 'infra'] as const)
      expect(await gridTasks(`&show=${show}`)).toEqual({
        tasks: expected[show],
        total: expected.all.length,
      });
    // Text matches the task id or its instruction ("do t5"), case aside, and combines with show.
    expect((await gridTasks('&task=T5')).tasks).toEqual(['t5']);
    expect((await gridTasks('&task=do%20t&show=infra')).tasks).toEqual(['t3']);
    expect((await gridTasks('&task=nothing-like-it')).tasks).toEqual([]);
    const bad = await fetch(url('/api/grid?run=run-a&show=broken'));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe(
      'show=broken is none of all, differ, failed, infra',
    );
  });

  it('the page filters tasks by verdict and text, in the URL, counting what it hides', async () => {
    const expected = await tasksEachFilterKeeps(['run-a', 'run-b']);
    const shownTasks = () =>
      page
        .locator('.runs-grid-row')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task')).sort());
    await page.goto(url('/grid?run=run-a&run=run-b'));
    await waitForText(page.locator('[data-count="grid"]'), `${expected.all.length} tasks × 2 runs`);
    expect(await shownTasks()).toEqual(expected.all);

    await page.locator('select[name="show"]').selectOption('differ');
    await waitForText(
      page.locator('[data-count="grid"]'),
      `${expected.differ.length} of ${expected.all.length} tasks × 2 runs`,
    );
    expect(await shownTasks()).toEqual(expected.differ);
    expect(new URL(page.url()).searchParams.get('show')).toBe('differ');

    await page.locator('select[name="show"]').selectOption('failed');
    await waitForText(page.locator('[data-count="grid"]'), `${expected.failed.length} of `);
    expect(await shownTasks()).toEqual(expected.failed);

    await page.locator('input[name="task"]').fill('t2');
    await waitForText(page.locator('[data-count="grid"]'), `1 of ${expected.all.length} tasks`);
    expect(await shownTasks()).toEqual(['t2']);
    expect(new URL(page.url()).searchParams.get('task')).toBe('t2');

    // Opened from its URL, the page shows the filter it was given.
    await page.goto(url('/grid?run=run-a&run=run-b&show=infra'));
    await waitForText(page.locator('[data-count="grid"]'), `1 of ${expected.all.length} tasks`);
    expect(await page.locator('select[name="show"]').inputValue()).toBe('infra');
    expect(await shownTasks()).toEqual(expected.infra);
  });
});

describe('time per phase', () => {
  it("a WebShop run's generic phases: sums and p50/p95 over each task's final attempt equal SQL's timestamps", async () => {
    const { rows } = await sql<{ started: Date; finished: Date; last: Date | null }>`
      select a.started_at as started, a.finished_at as finished,
             (select max(s.at) from steps s where s.run_id = a.run_id and s.task_id = a.task_id and s.attempt = a.attempt) as last
      from tasks t join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
      where t.run_id = 'run-a'`.execute(services.db);
    const phases = {
      agent: rows.map((r) => (r.last ?? r.finished).getTime() - r.started.getTime()),
      finish: rows.map((r) => r.finished.getTime() - (r.last ?? r.finished).getTime()),
      total: rows.map((r) => r.finished.getTime() - r.started.getTime()),
    };
    await page.goto(url('/runs/run-a'));
    for (const [phase, values] of Object.entries(phases)) {
      const row = page.locator(`[data-table="phases"] tr[data-phase="${phase}"]`);
      await row.waitFor();
      expect(await row.locator('[data-cell="attempts"]').textContent()).toBe(String(values.length));
      const ms = (cell: string) => row.locator(`[data-cell="${cell}"]`).getAttribute('data-ms');
      expect(Number(await ms('total'))).toBe(values.reduce((x, y) => x + y, 0));
      expect(Number(await ms('p50'))).toBe(Math.round(percentileCont(values, 0.5)));
      expect(Number(await ms('p95'))).toBe(Math.round(percentileCont(values, 0.95)));
      expect(Number(await ms('max'))).toBe(Math.max(...values));
    }
    expect(await page.locator('[data-table="phases"] tr[data-phase]').count()).toBe(3);
  });

  it('OSWorld: a graded attempt shows the reset, setup, agent and grading its grade recorded; an ungraded one the generic phases', async () => {
    await page.goto(url('/runs/run-os/tasks/os1'));
    const graded = page.locator('[data-table="task-phases"] tr[data-attempt="1"]');
    await graded.waitFor();
    const msOf = async (phase: string) =>
      graded.locator(`[data-phase="${phase}"]`).getAttribute('data-ms');
    expect(await msOf('reset')).toBe('4000');
    expect(await msOf('setup')).toBe('5000');
    expect(await msOf('agent')).toBe('80000');
    expect(await msOf('grading')).toBe('9000');
    expect(await msOf('total')).toBe('100000');
    await page.goto(url('/runs/run-os'));
    const phase = (name: string) => page.locator(`[data-table="phases"] tr[data-phase="${name}"]`);
    await phase('reset').waitFor();
    // The agent phase: 80 s as graded for os1, 40 s (start to last step) for ungraded os2.
    expect(await phase('agent').locator('[data-cell="total"]').getAttribute('data-ms')).toBe(
      '120000',
    );
    expect(await phase('reset').locator('[data-cell="attempts"]').textContent()).toBe('1');
    expect(await phase('finish').locator('[data-cell="total"]').getAttribute('data-ms')).toBe(
      '10000',
    );
    await waitForText(page.locator('[data-phase-legend]'), "reset: the stack's reset command");
  });
});

describe('the run timeline', () => {
  it('draws each bucket with the attempts settled in it and the most running at once, as the attempts rows say', async () => {
    const { rows } = await sql<{ started: Date; finished: Date; status: string }>`
      select started_at as started, finished_at as finished, status from attempts where run_id = 'run-a'`.execute(
      services.db,
    );
    const t0 = Math.min(...rows.map((r) => r.started.getTime()));
    const t1 = Math.max(...rows.map((r) => r.finished.getTime()));
    const width = (t1 - t0) / 60;
    const bucketOf = (t: number) => Math.min(Math.floor((t - t0) / width), 59);
    const runningAt = (t: number) =>
      rows.filter((r) => r.started.getTime() <= t && t < r.finished.getTime()).length;
    const expected = Array.from({ length: 60 }, (_, bucket) => {
      const events = rows
        .flatMap((r) => [r.started.getTime(), r.finished.getTime()])
        .filter((t) => bucketOf(t) === bucket);
      const settled = rows.filter((r) => bucketOf(r.finished.getTime()) === bucket);
      return {
        settled: settled.length,
        succeeded: settled.filter((r) => r.status === 'success').length,
        running: Math.max(runningAt(t0 + bucket * width), ...events.map(runningAt)),
      };
    });
    await page.goto(url('/runs/run-a'));
    const bars = page.locator('[data-panel="timeline"] svg g[data-bucket]');
    await bars.first().waitFor({ state: 'attached' });
    const drawn = await bars.evaluateAll((els) =>
      els.map((el) => ({
        settled: Number(el.getAttribute('data-settled')),
        succeeded: Number(el.getAttribute('data-succeeded')),
        running: Number(el.getAttribute('data-running')),
      })),
    );
    expect(drawn).toEqual(expected);
    expect(Math.max(...drawn.map((b) => b.running))).toBe(3);
    await waitForText(page.locator('[data-timeline-summary]'), 'peak 3');
  });
});

describe('kept answers', () => {
  it('a kept grid, run phase table and timeline follow a task that settles after they were built', async () => {
    type Grid = { rows: [string, Record<string, [number, string, number | null, null][]>][] };
    const gridOf = async () => (await (await fetch(url('/api/grid?run=run-b'))).json()) as Grid;
    const t5 = (grid: Grid) => grid.rows.find(([task]) => task === 't5')?.[1]['1']?.[0]?.[1];
    expect(t5(await gridOf())).toBe('cancelled');
    expect(t5(await gridOf())).toBe('cancelled');
    const phasesOf = async () =>
      (
        (await (await fetch(url('/api/runs/run-b/phases'))).json()) as {
          rows: { phase: string; attempts: number }[];
        }
      ).rows.find((row) => row.phase === 'total')?.attempts;
    expect(await phasesOf()).toBe(2);
    const settledOf = async () =>
      (
        (await (await fetch(url('/api/runs/run-b/timeline'))).json()) as {
          buckets: { succeeded: number; failed: number }[];
        }
      ).buckets.reduce((sum, b) => sum + b.succeeded + b.failed, 0);
    expect(await settledOf()).toBe(2);
    await sql`update tasks set status = 'success', reward = 1, success = true, attempts = 1,
                               started_at = ${at(30)}, finished_at = ${at(31)}
              where run_id = 'run-b' and task_id = 't5'`.execute(services.db);
    await sql`insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status, started_at, finished_at)
              values ('run-b', 't5', 1, 1, 'w', 'success', ${at(30)}, ${at(31)})`.execute(
      services.db,
    );
    expect(t5(await gridOf())).toBe('success');
    expect(await phasesOf()).toBe(3);
    expect(await settledOf()).toBe(3);
  });
});
