import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { RunsRepository } from '@benchfleet/db';
import { useTestServices } from '@benchfleet/testing';
import { useDashboardInChromium } from '../test-support/dashboard-in-chromium.js';
import { waitForText } from '../test-support/headless-chromium.js';

// A run of three epochs in Chromium: the run page's epochs, pass@3, pass^3 and flip rate equal the
// run_epochs view, and the task table shows each row's epoch.

const services = useTestServices();
const dash = useDashboardInChromium(services);
const RUN = 'run-epochs';
// Verdicts per task over epochs 1..3: a passes always, b once, c never, d twice.
const VERDICTS: Record<string, boolean[]> = {
  'goal-a': [true, true, true],
  'goal-b': [false, true, false],
  'goal-c': [false, false, false],
  'goal-d': [true, false, true],
};

/** Writes a run whose task `base` has the given verdicts, epoch by epoch. */
async function writeRun(id: string, verdicts: Record<string, boolean[]>): Promise<void> {
  const bases = Object.keys(verdicts);
  const epochs = Math.max(...Object.values(verdicts).map((v) => v.length));
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id,
      name: `${epochs} epoch(s)`,
      benchmark: 'webshop',
      config: JSON.stringify({ catalog_id: 'demo' }),
      model: null,
      agent: JSON.stringify({ kind: 'rule' }),
      code_version: 'test',
      epochs,
    },
    tasks: Array.from({ length: epochs }, (_, e) => e + 1).flatMap((epoch) =>
      bases.map((base, i) => ({
        task_id: epoch === 1 ? base : `${base}.epoch${epoch}`,
        base_task_id: base,
        epoch,
        seq: (epoch - 1) * bases.length + i,
        domain: 'fashion',
        instruction: `buy ${base}`,
        spec: JSON.stringify({ goal_index: i }),
      })),
    ),
  });
  for (const [base, verdictsOfTask] of Object.entries(verdicts))
    for (const [index, passed] of verdictsOfTask.entries())
      await services.db
        .updateTable('tasks')
        .set({
          status: passed ? 'success' : 'failed',
          success: passed,
          reward: passed ? 1 : 0,
          finished_at: new Date(),
        })
        .where('run_id', '=', id)
        .where('base_task_id', '=', base)
        .where('epoch', '=', index + 1)
        .execute();
}

const SINGLE = 'run-single';
const SINGLE_VERDICTS: Record<string, boolean[]> = {
  'goal-a': [true],
  'goal-b': [true],
  'goal-c': [false],
  'goal-d': [false],
};

beforeAll(async () => {
  await writeRun(RUN, VERDICTS);
  await writeRun(SINGLE, SINGLE_VERDICTS);
});

describe('the dashboard with epochs', () => {
  it('shows epochs, pass@3, pass^3 and the flip rate as the view has them, and the epoch of each task row', async () => {
    const view = await sql<{ pass_at_n: number; pass_hat_n: number; flip_rate: number }>`
      select pass_at_n, pass_hat_n, flip_rate from run_epochs where run_id = ${RUN}
    `.execute(services.db);
    // By hand: pass@3 = 3/4 (all but c), pass^3 = 1/4 (a), flips b and d = 2/4.
    expect(view.rows[0]).toEqual({ pass_at_n: 0.75, pass_hat_n: 0.25, flip_rate: 0.5 });

    const page = await dash.browser.newPage();
    await page.goto(`${dash.sut.dashboard.url}/runs/${RUN}`);
    await waitForText(page.locator('[data-metric="epochs"] dd'), '3');
    expect(await page.locator('[data-metric="pass-at-n"] dt').textContent()).toBe('pass@3');
    expect(await page.locator('[data-metric="pass-at-n"] dd').textContent()).toBe('75.0%');
    expect(await page.locator('[data-metric="pass-hat-n"] dt').textContent()).toBe('pass^3');
    expect(await page.locator('[data-metric="pass-hat-n"] dd').textContent()).toBe('25.0%');
    expect(await page.locator('[data-metric="flip-rate"] dd').textContent()).toBe('50.0%');

    await waitForText(page.locator('[role="columnheader"]'), 'Epoch');
    for (const [taskId, epoch] of [
      ['goal-a', '1'],
      ['goal-b.epoch2', '2'],
      ['goal-d.epoch3', '3'],
    ] as const)
      expect(
        await page.locator(`[data-task="${taskId}"] [data-column="epoch"]`).textContent(),
      ).toBe(epoch);
    await page.close();
  });

  it('compares the run of three epochs with a one-epoch run, all epochs paired per task, with the minimum detectable difference', async () => {
    // Per task, A's pass rate over its 3 epochs against B's one verdict: a 1 vs 1, b 1/3 vs 1,
    // c 0 vs 0, d 2/3 vs 0: differences 0, 2/3, 0, -2/3 (mean 0, sample variance 8/27).
    const mdd = ((1.959963984540054 + 0.8416212335729143) * Math.sqrt(8 / 27)) / Math.sqrt(4);
    const page = await dash.browser.newPage();
    await page.goto(`${dash.sut.dashboard.url}/compare?a=${RUN}&b=${SINGLE}`);
    const text = await waitForText(page.locator('[data-field="mdd"]'), 'Minimum detectable');
    expect(text).toContain(`at 4 tasks: success rate ${(mdd * 100).toFixed(1)} pp`);
    expect(text).toContain('A 3 epoch(s), B 1');
    await page.close();
  });
});
