import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { WebshopTables } from '@benchfleet/webshop-benchmark';
import {
  runCli,
  startCli,
  startFakeLlm,
  useTestServices,
  waitForWorkerReady,
  webshopRulePolicy,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import {
  startDashboardUnderTest,
  type DashboardUnderTest,
} from '../test-support/dashboard-under-test.js';
import {
  launchChromium,
  waitForText,
  type HeadlessChromium,
} from '../test-support/headless-chromium.js';

// A real fleet writes while a page is open: worker-webshop with the LLM agent against the fake
// LLM, and the aggregate worker. The fake LLM holds every answer until the test lets go, so the
// page is seen with episodes in flight, then settled and summarised, without ever reloading.

const services = useTestServices();
let sut: DashboardUnderTest;
let browser: HeadlessChromium;
let page: Page;
let llm: FakeLlm;
let release: () => void = () => undefined;
const held = new Promise<void>((resolve) => (release = resolve));
const processes: StartedProcess[] = [];

beforeAll(async () => {
  llm = await startFakeLlm({
    script: async (request) => {
      await held;
      return webshopRulePolicy(request);
    },
  });
  const imported = await runCli(
    'scheduler',
    ['webshop', 'import', '--demo', '--products', '400'],
    services.env,
    120_000,
  );
  expect(imported.code, imported.stderr).toBe(0);
  sut = await startDashboardUnderTest(services);
  browser = await launchChromium();
  page = await browser.newPage();
});

afterAll(async () => {
  release();
  for (const started of processes)
    if (started.child.exitCode === null) started.child.kill('SIGKILL');
  await browser?.close();
  await sut?.close();
  await llm?.close();
});

function start(name: 'worker-webshop' | 'scheduler', args: string[]): StartedProcess {
  const started = startCli(name, args, {
    ...services.env,
    LOG_LEVEL: 'info',
    LLM_API_KEY: 'sk-test-key-for-the-fake',
  });
  processes.push(started);
  return started;
}

describe('a run page left open while the fleet works', () => {
  it('shows workers taking tasks, counts moving and the summary arriving, without a reload', async () => {
    const enqueued = await runCli(
      'scheduler',
      [
        'enqueue',
        '--benchmark',
        'webshop',
        '--goals',
        '0-5',
        '--agent',
        'llm',
        '--llm-base-url',
        llm.baseUrl,
        '--llm-model',
        'fake-model',
        '--json',
      ],
      services.env,
    );
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const { runId } = JSON.parse(enqueued.stdout) as { runId: string };

    await page.goto(`${sut.dashboard.url}/runs/${runId}`);
    await waitForText(page.locator('[data-progress="done"]'), '0 / 6 settled');
    await page.locator('[data-provisional="true"]').waitFor();
    await waitForText(
      page.locator('[data-banner="not-consumed"]'),
      'Nothing is consuming this run: 6 tasks are pending',
    );
    await page.evaluate('window.__stillTheSamePage = true');

    const worker = start('worker-webshop', [
      '--worker-id',
      'live-webshop',
      '--concurrency',
      '2',
      '--catalog',
      'demo',
      '--metrics-port',
      '0',
    ]);
    await waitForWorkerReady(worker);
    start('scheduler', ['worker', '--worker-id', 'live-aggregate', '--metrics-port', '0']);

    // Both episodes wait on the held LLM: the worker is seen holding two of this run's tasks.
    await page.locator('[data-banner="not-consumed"]').waitFor({ state: 'detached' });
    await page.locator('tr[data-worker="live-webshop"] a.example').nth(1).waitFor();
    await waitForText(page.locator('[data-count="running"] dd'), '2');

    release();
    await waitForText(page.locator('[data-progress="done"]'), '6 / 6 settled', 600_000);
    await page.locator('[data-provisional="true"]').waitFor({ state: 'detached' });
    await waitForText(page.locator('[data-count="tasks"]'), '6 of 6 tasks');
    expect(await page.locator('.vgrid-row .status-queued').count()).toBe(0);
    expect(await page.evaluate('window.__stillTheSamePage')).toBe(true);
  });

  it("opens a finished episode with each step's available actions and the reward the worker computed", async () => {
    const bought = await services.db
      .selectFrom('tasks')
      .select(['run_id', 'task_id', 'result', 'reward', 'spec'])
      .where('final_api_status', '=', 'BOUGHT')
      .orderBy('seq')
      .executeTakeFirstOrThrow();
    const info = (bought.result as { reward_info: Record<string, number | boolean> }).reward_info;
    await page.goto(`${sut.dashboard.url}/runs/${bought.run_id}/tasks/${bought.task_id}`);
    await waitForText(
      page.locator('[data-step="1"] [data-field="available-actions"]'),
      'search[…]',
    );
    const value = (component: string) =>
      page.locator(`[data-reward-component="${component}"] [data-value]`).textContent();
    expect(await value('attribute')).toBe(Number(info['r_att']).toFixed(3));
    expect(await value('type')).toBe(Number(info['r_type']).toFixed(3));
    expect(await value('price')).toBe(info['r_price'] ? 'yes (1)' : 'no (0)');
    if (info['r_option'] !== undefined)
      expect(await value('option')).toBe(Number(info['r_option']).toFixed(3));
    expect(await value('total')).toBe(Number(bought.reward).toFixed(3));
    // Next to each component, what the goal asked for, from the catalog's goal row.
    const goal = await services.db
      .withTables<WebshopTables>()
      .selectFrom('webshop_goals')
      .select('goal')
      .where('catalog_id', '=', 'demo')
      .where('goal_index', '=', Number((bought.spec as { goal_index: number }).goal_index))
      .executeTakeFirstOrThrow();
    const wanted = goal.goal as { attributes: string[]; price_upper: number };
    expect(
      await page.locator('[data-reward-component="attribute"] [data-asked]').textContent(),
    ).toBe(wanted.attributes.join(', '));
    await waitForText(
      page.locator('[data-reward-component="price"] [data-asked]'),
      `against at most $${wanted.price_upper}`,
    );
  });
});
