import { Queue, Worker } from 'bullmq';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createDatabase, type Database } from '@benchfleet/db';
import { createRedisConnection, WorkerHeartbeat } from '@benchfleet/queue';
import { runCli, solidColorPng, TcpRelay, useTestServices } from '@benchfleet/testing';
import { COMPARISON_TABLE, writeComparisonRuns } from '../test-support/comparison-fixtures.js';
import {
  startDashboardUnderTest,
  type DashboardUnderTest,
} from '../test-support/dashboard-under-test.js';
import {
  launchChromium,
  waitForText,
  type HeadlessChromium,
} from '../test-support/headless-chromium.js';
import { writeFixtureRun, type FixtureTask } from '../test-support/run-fixtures.js';

// The dashboard in Debian's Chromium, asserting the DOM: runs list and its URL state, the OSWorld
// trajectory with its action overlay, the WebShop reward breakdown, inert task text, the 404 page,
// the comparison page against `scheduler compare`, the task table, and the database-down banner.

const services = useTestServices();
let sut: DashboardUnderTest;
let browser: HeadlessChromium;
let page: Page;
const dialogs: string[] = [];

const XSS = '<img src=x onerror=alert(1)>';
const REWARD_INFO = {
  r_type: 1,
  r_att: 0.6667,
  w_att: 0.5,
  query_match: true,
  category_match: false,
  title_score: 0.4,
  r_option: 0.5,
  w_option: 0.3333,
  r_price: true,
  w_price: 0.1667,
};

const click = (x: number, y: number) => ({
  tool_calls: [
    {
      name: 'computer_click_mouse',
      input: { coordinates: { x, y }, button: 'left', clickCount: 1 },
    },
  ],
});

function manyTasks(count: number): FixtureTask[] {
  return Array.from({ length: count }, (_, i) => ({
    taskId: `t-${String(i).padStart(4, '0')}`,
    domain: i % 3 === 0 ? 'gimp' : 'chrome',
    instruction: `task ${i}`,
    attempts: [
      {
        steps: Array.from({ length: 1 + (i % 5) }, () => ({ action: click(1, 1) })),
        outcome:
          i % 4 === 0
            ? {
                status: 'failed' as const,
                success: false,
                reward: 0,
                durationMs: 1_000 + i,
                finalApiStatus: 'FAILED',
                error: `model error ${i % 8 === 0 ? 'timeout' : 'refusal'}`,
              }
            : {
                status: 'success' as const,
                success: true,
                reward: 1,
                durationMs: 1_000 + i,
                finalApiStatus: 'COMPLETED',
              },
      },
    ],
  }));
}

/** One settled attempt for a fixture task. */
function settled(
  outcome: NonNullable<FixtureTask['attempts']>[number]['outcome'],
): NonNullable<FixtureTask['attempts']> {
  return [
    { steps: [{ action: { action: 'click[buy now]', kind: 'click', valid: true } }], outcome },
  ];
}

/** A WebShop purchase short of reward 1, with the official reward's components. */
function purchase(index: number, info: Record<string, number | boolean | null>): FixtureTask {
  return {
    taskId: `goal-${String(index).padStart(5, '0')}`,
    domain: 'test',
    instruction: `goal ${index}`,
    attempts: settled({
      status: 'failed',
      success: false,
      reward: 0.5,
      durationMs: 40,
      finalApiStatus: 'BOUGHT',
      result: { stop_reason: 'bought', reward_info: info },
    }),
  };
}

// The WebShop failures by the reward component that missed: what the panel must show.
const MISSED = [
  { reason: 'attribute', tasks: ['goal-00001', 'goal-00003'] },
  { reason: 'option, price', tasks: ['goal-00002'] },
  { reason: 'type', tasks: ['goal-00004'] },
  { reason: '', tasks: ['goal-00005'] },
];

/** Runs for issue 19's dashboard defects: a binary run with an error, failed purchases, a cancelled run, pending tasks. */
async function writeIssue19Runs(): Promise<void> {
  const binary = (id: string, status: 'success' | 'failed' | 'error'): FixtureTask => ({
    taskId: id,
    domain: 'os',
    instruction: id,
    attempts: settled(
      status === 'error'
        ? { status, errorClass: 'infra', error: 'Bytebot unreachable', durationMs: 5 }
        : {
            status,
            success: status === 'success',
            reward: status === 'success' ? 1 : 0,
            durationMs: 50,
            finalApiStatus: status === 'success' ? 'COMPLETED' : 'FAILED',
          },
    ),
  });
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-binary',
    name: 'osworld-binary',
    benchmark: 'osworld',
    tasks: [
      binary('b-1', 'success'),
      binary('b-2', 'success'),
      binary('b-3', 'failed'),
      binary('b-4', 'error'),
    ],
  });
  const full = { r_att: 1, r_option: 1, r_price: true, r_type: 1 };
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-ws-fail',
    name: 'webshop-failures',
    benchmark: 'webshop',
    config: { catalog_id: 'demo' },
    agent: { kind: 'rule' },
    tasks: [
      purchase(1, { ...full, r_att: 0.5 }),
      purchase(2, { ...full, r_option: 0.5, r_price: false }),
      purchase(3, { ...full, r_att: 0.25 }),
      purchase(4, { ...full, r_option: null, r_type: 0.5 }),
      {
        taskId: 'goal-00005',
        domain: 'test',
        instruction: 'goal 5',
        attempts: settled({
          status: 'failed',
          success: false,
          reward: 0,
          durationMs: 40,
          finalApiStatus: 'STEP_LIMIT',
          result: { stop_reason: 'step_limit', reward_info: null },
        }),
      },
    ],
  });
  for (const id of ['run-cancelled', 'run-pending'])
    await writeFixtureRun(services.db, sut.artifacts, {
      id,
      name: id,
      benchmark: 'webshop',
      config: { catalog_id: 'demo' },
      tasks: [1, 2, 3, 4, 5].map((i) => ({
        taskId: `goal-0000${i}`,
        domain: 'test',
        instruction: `goal ${i}`,
      })),
    });
}

beforeAll(async () => {
  sut = await startDashboardUnderTest(services);
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-osw',
    name: 'osworld-claude',
    benchmark: 'osworld',
    model: { provider: 'anthropic', name: 'claude', title: 'Claude' },
    agent: { kind: 'bytebot' },
    tasks: [
      {
        taskId: 'retried',
        domain: 'chrome',
        instruction: `Open ${XSS} in the browser`,
        attempts: [
          {
            worker: 'stack-1',
            steps: [],
            outcome: {
              status: 'error',
              errorClass: 'infra',
              error: 'Bytebot unreachable at first',
              durationMs: 10,
            },
            final: false,
          },
          {
            worker: 'stack-2',
            steps: [
              {
                action: { tool_calls: [{ name: 'computer_screenshot', input: {} }] },
                text: 'Looking first',
                screenshot: solidColorPng(1280, 960, [20, 40, 60]),
              },
              {
                action: click(960, 240),
                text: `Clicking <script>alert(2)</script> here`,
                screenshot: solidColorPng(1280, 960, [60, 40, 20]),
              },
              {
                action: {
                  tool_calls: [
                    {
                      name: 'computer_drag_mouse',
                      input: {
                        path: [
                          { x: 100, y: 900 },
                          { x: 1200, y: 60 },
                        ],
                        button: 'left',
                      },
                    },
                  ],
                },
                text: 'Dragging',
                screenshot: solidColorPng(1280, 960, [20, 90, 20]),
              },
            ],
            outcome: {
              status: 'failed',
              finalApiStatus: 'NEEDS_HELP',
              success: false,
              reward: 0,
              durationMs: 30_000,
              error: 'agent asked for help',
              result: { stop_reason: 'end_status' },
            },
          },
        ],
      },
      ...manyTasks(300),
    ],
  });
  await writeFixtureRun(services.db, sut.artifacts, {
    id: 'run-ws',
    name: 'webshop-reward',
    benchmark: 'webshop',
    agent: { kind: 'rule' },
    tasks: [
      {
        taskId: 'goal-00007',
        domain: 'test',
        instruction: 'i want a blue mug under 20 dollars',
        attempts: [
          {
            steps: [
              {
                action: {
                  action: 'search[blue mug]',
                  kind: 'search',
                  valid: true,
                  available_actions: { has_search_bar: true, clickables: ['search'] },
                },
                observation: 'Results page 1',
              },
              {
                action: {
                  action: 'click[b0mug]',
                  kind: 'click',
                  valid: true,
                  available_actions: {
                    has_search_bar: false,
                    clickables: ['back to search', 'b0mug', 'b0cup'],
                  },
                },
                observation: 'Blue mug page',
              },
              {
                action: {
                  action: 'click[buy now]',
                  kind: 'click',
                  valid: true,
                  available_actions: { has_search_bar: false, clickables: ['buy now', 'blue'] },
                },
                observation: 'Thank you for shopping',
                reward: 0.6,
              },
            ],
            outcome: {
              status: 'failed',
              success: false,
              reward: 0.6,
              durationMs: 80,
              finalApiStatus: 'BOUGHT',
              result: {
                stop_reason: 'bought',
                purchased_asin: 'B0MUG',
                purchased_options: { color: 'blue' },
                price: 12.5,
                reward_info: REWARD_INFO,
              },
            },
          },
        ],
      },
    ],
  });
  await writeComparisonRuns(services.db, sut.artifacts, { a: 'run-a', b: 'run-b' });
  await writeIssue19Runs();
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
});

afterAll(async () => {
  await browser?.close();
  await sut?.close();
});

const url = (path: string) => `${sut.dashboard.url}${path}`;

describe('runs list', () => {
  it('lists every run with its success label, and keeps filters and sort in the URL', async () => {
    await page.goto(url('/'));
    await waitForText(page.locator('[data-count="runs"]'), '8 of 8 runs');
    await waitForText(
      page.locator('tr[data-run="run-osw"] [data-cell="success-rate"]'),
      'agent-reported',
    );
    await waitForText(
      page.locator('tr[data-run="run-ws"] [data-cell="success-rate"]'),
      'reward = 1',
    );
    await page.locator('select[name="benchmark"]').selectOption('webshop');
    await waitForText(page.locator('[data-count="runs"]'), '6 of 8 runs');
    expect(new URL(page.url()).searchParams.get('benchmark')).toBe('webshop');
    await page.locator('th button', { hasText: 'Run' }).click();
    await page.locator('th button', { hasText: 'Run' }).click();
    expect(new URL(page.url()).search).toBe('?benchmark=webshop&sort=name&dir=asc');

    // The URL alone restores the view.
    await page.goto(url('/?benchmark=webshop&sort=name&dir=asc'));
    await waitForText(page.locator('[data-count="runs"]'), '6 of 8 runs');
    expect(
      await page
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run'))),
    ).toEqual(['run-cancelled', 'run-pending', 'run-ws-fail', 'run-b', 'run-ws', 'run-a']);
    await page.goto(url('/?q=claude'));
    await waitForText(page.locator('[data-count="runs"]'), '1 of 8 runs');
    expect(await page.locator('select[name="benchmark"]').inputValue()).toBe('');
  });
});

describe('OSWorld trajectory', () => {
  it("draws the step's click on the frame the agent saw, at the screen coordinates", async () => {
    await page.goto(url('/runs/run-osw/tasks/retried?attempt=2&step=2'));
    const frame = page.locator('[data-frame] img');
    await frame.waitFor();
    await page.waitForFunction("document.querySelector('[data-frame] img')?.naturalWidth === 1280");
    // The frame shown is step 1's screenshot: what the screen looked like when the agent chose.
    expect(await frame.getAttribute('src')).toBe(
      '/api/runs/run-osw/tasks/retried/attempts/2/steps/1/screenshot',
    );
    const marker = page.locator('circle[data-point="960,240"]');
    await marker.waitFor();
    const image = await frame.boundingBox();
    const circle = await marker.boundingBox();
    if (!image || !circle) throw new Error('frame or marker not laid out');
    expect(circle.x + circle.width / 2).toBeCloseTo(image.x + (960 * image.width) / 1280, 0);
    expect(circle.y + circle.height / 2).toBeCloseTo(image.y + (240 * image.height) / 960, 0);
    await waitForText(page.locator('[data-field="actions"]'), 'click left ×1 at (960, 240)');
  });

  it('moves between steps with the keyboard, draws drags as paths, and shows every attempt and why it stopped', async () => {
    await page.goto(url('/runs/run-osw/tasks/retried?attempt=2&step=2'));
    await page.locator('[data-frame] img').waitFor();
    await page.keyboard.press('ArrowRight');
    await page.locator('[data-step="3"]').waitFor();
    expect(new URL(page.url()).searchParams.get('step')).toBe('3');
    await page.locator('circle[data-point="100,900"]').waitFor();
    await page.locator('circle[data-point="1200,60"]').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.locator('[data-step="1"]').waitFor();
    expect(await page.locator('[data-field="filmstrip"] button').count()).toBe(3);
    await waitForText(
      page.locator('[data-field="final-status"]'),
      'NEEDS_HELP — the agent asked a human for help',
    );
    await waitForText(page.locator('[data-field="stop-reason"]'), 'end_status');
    expect(await page.locator('[data-table="attempts"] tbody tr').count()).toBe(2);
    await waitForText(page.locator('tr[data-attempt="1"]'), 'Bytebot unreachable at first');
    await page.locator('tr[data-attempt="1"] button').click();
    await waitForText(page.locator('[data-page="trajectory"]'), 'Attempt #1 recorded no step.');
  });

  it('keeps task and model text inert', async () => {
    await page.goto(url('/runs/run-osw/tasks/retried?attempt=2&step=2'));
    const instruction = await waitForText(page.locator('[data-field="instruction"]'), XSS);
    expect(instruction).toBe(`Open ${XSS} in the browser`);
    await waitForText(page.locator('[data-field="model-text"]'), '<script>alert(2)</script>');
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('main script').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});

describe('WebShop trajectory', () => {
  it('explains the reward component by component, with the available actions of each step', async () => {
    await page.goto(url('/runs/run-ws/tasks/goal-00007'));
    await waitForText(page.locator('[data-field="purchase"]'), 'B0MUG');
    const value = (component: string) =>
      page.locator(`[data-reward-component="${component}"] [data-value]`).textContent();
    const weight = (component: string) =>
      page.locator(`[data-reward-component="${component}"] [data-weight]`).textContent();
    expect(await value('attribute')).toBe(REWARD_INFO.r_att.toFixed(3));
    expect(await weight('attribute')).toBe(REWARD_INFO.w_att.toFixed(3));
    expect(await value('option')).toBe(REWARD_INFO.r_option.toFixed(3));
    expect(await weight('option')).toBe(REWARD_INFO.w_option.toFixed(3));
    expect(await value('price')).toBe('yes (1)');
    expect(await weight('price')).toBe(REWARD_INFO.w_price.toFixed(3));
    expect(await value('type')).toBe(REWARD_INFO.r_type.toFixed(3));
    const total =
      REWARD_INFO.r_type *
      (REWARD_INFO.r_att * REWARD_INFO.w_att +
        REWARD_INFO.r_option * REWARD_INFO.w_option +
        REWARD_INFO.w_price);
    expect(await value('total')).toBe(total.toFixed(3));
    await waitForText(page.locator('[data-reward-component="total"]'), 'recorded: 0.600');
    await waitForText(page.locator('[data-field="purchase"]'), 'color: blue');
    await waitForText(
      page.locator('[data-step="2"] [data-field="available-actions"]'),
      'click[b0cup]',
    );
    await page.locator('[data-step="2"]').click();
    await waitForText(page.locator('[data-step="2"] [data-field="observation"]'), 'Blue mug page');
  });
});

describe('not found', () => {
  it('answers an unknown run with HTTP 404 and a page that leads back', async () => {
    const response = await page.goto(url('/runs/no-such-run'));
    expect(response?.status()).toBe(404);
    await waitForText(page.locator('[data-page="not-found"]'), 'There is no run no-such-run.');
    const taskResponse = await page.goto(url('/runs/run-osw/tasks/no-such-task'));
    expect(taskResponse?.status()).toBe(404);
    await waitForText(
      page.locator('[data-page="not-found"]'),
      'Run run-osw has no task no-such-task.',
    );
    await page.locator('[data-page="not-found"] a', { hasText: 'Back to all runs' }).click();
    await waitForText(page.locator('[data-count="runs"]'), 'of 8 runs');
  });
});

describe('comparison', () => {
  it('shows the numbers `scheduler compare` prints, and opens a flipped task side by side', async () => {
    const cli = await runCli('scheduler', ['compare', 'run-a', 'run-b', '--json'], services.env);
    expect(cli.code).toBe(0);
    const numbers = JSON.parse(cli.stdout) as {
      table: Record<string, number>;
      success_rate: { difference: number; ci95: { low: number; high: number } };
      mean_reward: { difference: number; ci95: { low: number; high: number } };
      mcnemar_p: number;
      flipped: { task_id: string }[];
    };
    expect(numbers.table).toEqual(COMPARISON_TABLE);
    await page.goto(url('/compare?a=run-a&b=run-b'));
    await waitForText(page.locator('[data-field="paired"]'), '12 tasks settled in both runs');
    for (const [cell, count] of Object.entries(numbers.table))
      expect(await page.locator(`[data-cell="${cell}"]`).textContent()).toBe(String(count));
    const points = (v: number) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} pp`;
    const signed4 = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(4)}`;
    const success = page.locator('[data-row="success_rate"]');
    expect(await success.locator('[data-cell="difference"]').textContent()).toBe(
      points(numbers.success_rate.difference),
    );
    expect(await success.locator('[data-cell="ci"]').textContent()).toBe(
      `[${points(numbers.success_rate.ci95.low)}, ${points(numbers.success_rate.ci95.high)}]`,
    );
    const reward = page.locator('[data-row="mean_reward"]');
    expect(await reward.locator('[data-cell="difference"]').textContent()).toBe(
      signed4(numbers.mean_reward.difference),
    );
    expect(await reward.locator('[data-cell="ci"]').textContent()).toBe(
      `[${signed4(numbers.mean_reward.ci95.low)}, ${signed4(numbers.mean_reward.ci95.high)}]`,
    );
    expect(await page.locator('[data-field="mcnemar"]').textContent()).toBe(
      `p = ${numbers.mcnemar_p.toPrecision(4)}`,
    );
    expect(
      await page
        .locator('[data-table="flipped"] tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task'))),
    ).toEqual(numbers.flipped.map((task) => task.task_id));

    await page.locator('[data-table="flipped"] a', { hasText: 'goal-00003' }).click();
    await waitForText(page.locator('[data-side="A"] [data-field="instruction"]'), 'goal 3');
    await waitForText(page.locator('[data-side="B"] [data-field="instruction"]'), 'goal 3');
    await waitForText(
      page.locator('[data-side="A"] .trajectory [data-panel="task"] h2'),
      'success',
    );
    await waitForText(page.locator('[data-side="B"] .trajectory [data-panel="task"] h2'), 'failed');
  });
});

describe('task table', () => {
  it('virtualises 301 tasks, filters and sorts through the URL, and opens a task with the keyboard', async () => {
    await page.goto(url('/runs/run-osw'));
    await waitForText(page.locator('[data-count="tasks"]'), '301 of 301 tasks');
    expect(await page.locator('.vgrid-row').count()).toBeLessThan(100);
    await page.locator('[data-table="tasks"] select[name="status"]').selectOption('failed');
    await waitForText(page.locator('[data-count="tasks"]'), '76 of 301 tasks');
    await page.locator('[data-table="tasks"] input[name="error"]').fill('timeout');
    await waitForText(page.locator('[data-count="tasks"]'), '38 of 301 tasks');
    expect(new URL(page.url()).searchParams.get('error')).toBe('timeout');
    await page.locator('[data-sort="total_steps"]').click();
    await page.locator('[data-sort="total_steps"]').click();
    expect(new URL(page.url()).searchParams.get('dir')).toBe('desc');
    const firstSteps = await page
      .locator('.vgrid-row')
      .first()
      .locator('[data-column="total_steps"]')
      .textContent();
    expect(firstSteps).toBe('5');

    await page.goto(url('/runs/run-osw?status=success&steps_min=5'));
    await waitForText(page.locator('[data-count="tasks"]'), '45 of 301 tasks');
    await page.locator('.vgrid-body').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const chosen = await page.locator('.vgrid-row[aria-selected="true"]').getAttribute('data-task');
    await page.keyboard.press('Enter');
    await page.locator('[data-page="trajectory"]').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/runs/run-osw/tasks/${chosen}`);
  });

  it('groups the failures by class and message before the per-domain table', async () => {
    await page.goto(url('/runs/run-osw'));
    const failures = page.locator('[data-table="failures"] tbody tr');
    await waitForText(failures.first(), 'model error');
    expect(await failures.count()).toBe(3);
    const panels = await page
      .locator('[data-panel]')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-panel')));
    expect(panels.indexOf('failures')).toBeLessThan(panels.indexOf('domains'));
    await page.locator('[data-panel="failures"] .sql-toggle').click();
    await waitForText(
      page.locator('[data-panel="failures"] [data-sql="psql"]'),
      "where t.run_id = 'run-osw'",
    );
  });
});

describe("issue 19's dashboard defects", () => {
  it('counts only the workers of its own Redis database, as `scheduler status` does', async () => {
    // A worker of another database on the same server, same prefix and queue: Redis lists its
    // connection with this database's, and the panel once counted it and dropped its warning.
    const elsewhere = new URL(services.redisUrl);
    elsewhere.pathname = '/7';
    const otherConnection = createRedisConnection(elsewhere.toString(), 'worker');
    const otherWorker = new Worker('webshop', async () => undefined, {
      connection: otherConnection,
      prefix: services.prefix,
      name: 'other-db-worker',
    });
    const otherBeat = new WorkerHeartbeat(
      otherConnection,
      services.prefix,
      'other-db-worker',
      'webshop',
    );
    const connection = createRedisConnection(services.redisUrl, 'worker');
    let ownWorker: Worker | undefined;
    let ownBeat: WorkerHeartbeat | undefined;
    try {
      await otherWorker.waitUntilReady();
      const queue = new Queue('webshop', { connection, prefix: services.prefix });
      await expect.poll(async () => (await queue.getWorkers()).length).toBe(1);
      await queue.close();

      await page.goto(url('/runs/run-pending'));
      await waitForText(
        page.locator('[data-banner="not-consumed"]'),
        'Nothing is consuming this run: 5 tasks are pending',
      );
      expect(await page.locator('tr[data-worker]').count()).toBe(0);
      const before = await runCli('scheduler', ['status', 'run-pending', '--json'], services.env);
      expect((JSON.parse(before.stdout) as { workers: unknown[] }).workers).toEqual([]);

      ownWorker = new Worker('webshop', async () => undefined, {
        connection,
        prefix: services.prefix,
        name: 'this-db-worker',
      });
      await ownWorker.waitUntilReady();
      ownBeat = new WorkerHeartbeat(connection, services.prefix, 'this-db-worker', 'webshop');
      await page.locator('tr[data-worker="this-db-worker"]').waitFor();
      await page.locator('[data-banner="not-consumed"]').waitFor({ state: 'detached' });
      await waitForText(
        page.locator('tr[data-worker="this-db-worker"] [data-cell="state"]'),
        'serving',
      );
      expect(
        await page
          .locator('tr[data-worker]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-worker'))),
      ).toEqual(['this-db-worker']);
      const after = await runCli('scheduler', ['status', 'run-pending', '--json'], services.env);
      const status = JSON.parse(after.stdout) as {
        workers: { workerId: string }[];
        notes: string[];
      };
      expect(status.workers.map((worker) => worker.workerId)).toEqual(['this-db-worker']);
      expect(status.notes.join('\n')).not.toMatch(/no worker is consuming/);
    } finally {
      await ownBeat?.stop();
      await ownWorker?.close();
      await otherBeat.stop();
      await otherWorker.close();
      connection.disconnect();
      otherConnection.disconnect();
    }
  });

  it('counts an errored task as reward 0 in the mean reward, as the success rate counts it a miss', async () => {
    const [numbers] = (
      await sql<{ success_rate: number; avg_reward: number; errors: number }>`
        select success_rate, avg_reward, errors from run_summary where run_id = 'run-binary'`.execute(
        services.db,
      )
    ).rows;
    // Two successes of four settled tasks, one of which ended in error: a binary reward's mean is its success rate.
    expect(numbers).toEqual({ success_rate: 0.5, avg_reward: 0.5, errors: 1 });
    await page.goto(url('/runs/run-binary'));
    await waitForText(page.locator('[data-metric="success-rate"] dd'), '50.0%');
    expect(await page.locator('[data-metric="mean-reward"] dd').textContent()).toBe('0.500');
    await waitForText(page.locator('tr[data-domain="os"]'), '50.0%');
    expect(await page.locator('tr[data-domain="os"] td').nth(8).textContent()).toBe('0.500');
  });

  it('shows an empty bar for a run cancelled before any task started', async () => {
    const cancel = await runCli('scheduler', ['cancel', 'run-cancelled'], services.env);
    expect(cancel.code, cancel.stderr).toBe(0);
    const [counts] = (
      await sql<{ cancelled: number; never_started: number }>`
        select count(*) filter (where status = 'cancelled')::int as cancelled,
               count(*) filter (where status = 'cancelled' and attempts = 0)::int as never_started
        from tasks where run_id = 'run-cancelled'`.execute(services.db)
    ).rows;
    expect(counts).toEqual({ cancelled: 5, never_started: 5 });
    // The first paint, before any script ran.
    const html = await (await fetch(url('/runs/run-cancelled'))).text();
    expect(html).toMatch(
      /<progress max="5" value="0"><\/progress><span[^>]*>0 \/ 5 ran · 5 cancelled before they started</,
    );
    await page.goto(url('/runs/run-cancelled'));
    await waitForText(
      page.locator('[data-progress="done"]'),
      '0 / 5 ran · 5 cancelled before they started',
    );
    expect(await page.locator('.progress-line progress').getAttribute('value')).toBe('0');
    expect(await page.locator('[data-progress="eta"]').textContent()).toBe('cancelled');
    // Nothing ran: no rate, no mean reward, and nothing spent (not an unknown cost).
    expect(await page.locator('[data-metric="success-rate"] dd').textContent()).toBe('–');
    expect(await page.locator('[data-metric="mean-reward"] dd').textContent()).toBe('–');
    await waitForText(page.locator('[data-panel="progress"] dl').nth(1), '$0');
    await page.goto(url('/'));
    await waitForText(page.locator('tr[data-run="run-cancelled"] [data-cell="progress"]'), '0/5');
    expect(
      await page
        .locator('tr[data-run="run-cancelled"] [data-cell="progress"] progress')
        .getAttribute('value'),
    ).toBe('0');
  });

  it('groups WebShop failures by the reward component that missed', async () => {
    await page.goto(url('/runs/run-ws-fail'));
    const rows = page.locator('[data-table="failures"] tbody tr');
    await waitForText(rows.first(), 'BOUGHT');
    await waitForText(page.locator('[data-table="failures"] thead'), 'reward components missed');
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({
        reason: tr.getAttribute('data-reason'),
        tasks: [...tr.querySelectorAll('a.example')].map((a) => a.textContent),
      })),
    );
    expect([...shown].sort((a, b) => (a.reason ?? '').localeCompare(b.reason ?? ''))).toEqual(
      [...MISSED].sort((a, b) => a.reason.localeCompare(b.reason)),
    );
    // The panel's own SQL, run over the same database, gives the same groups.
    const panels = (await (await fetch(url('/api/runs/run-ws-fail/panels'))).json()) as {
      failures: { query: { psql: string } };
    };
    const fromSql = await sql
      .raw<{ reason: string | null; tasks: number }>(panels.failures.query.psql)
      .execute(services.db);
    expect(fromSql.rows.map((row) => [row.reason ?? '', row.tasks]).sort()).toEqual(
      MISSED.map((group) => [group.reason, group.tasks.length]).sort(),
    );
  });

  it('leads back to benchfleet from the queue view', async () => {
    await page.goto(url('/queues'));
    const back = page.locator('[data-link="back-to-benchfleet"]');
    await back.waitFor();
    await back.click();
    await waitForText(page.locator('[data-count="runs"]'), 'of 8 runs');
    expect(new URL(page.url()).pathname).toBe('/');
  });

  it('cuts off no task-table header, sorted or not', async () => {
    await page.goto(url('/runs/run-osw'));
    await waitForText(page.locator('[data-count="tasks"]'), '301 of 301 tasks');
    const clipped = () =>
      page
        .locator('[role="columnheader"]')
        .evaluateAll((cells) =>
          cells
            .filter((cell) => cell.scrollWidth > cell.clientWidth)
            .map((cell) => cell.textContent),
        );
    expect(await clipped()).toEqual([]);
    for (const column of await page
      .locator('[data-sort]')
      .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-sort')))) {
      await page.locator(`[data-sort="${column}"]`).click();
      await page.locator(`[data-sort="${column}"]`).click();
      expect(await clipped(), `sorted by ${column}`).toEqual([]);
    }
  });
});

describe('a database that goes away', () => {
  it('shows a banner while Postgres is unreachable and recovers by itself when it returns', async () => {
    const target = new URL(services.databaseUrl);
    const relay = new TcpRelay(target.hostname, Number(target.port || 5432));
    const port = await relay.open();
    const relayed = new URL(services.databaseUrl);
    relayed.port = String(port);
    const db: Database = createDatabase(relayed.toString(), { max: 4, connectTimeoutMs: 1_000 });
    const outage = await startDashboardUnderTest(services, { db });
    const outagePage = await browser.newPage();
    try {
      await outagePage.goto(`${outage.dashboard.url}/runs/run-ws`);
      await waitForText(outagePage.locator('[data-progress="done"]'), '1 / 1 settled');
      await relay.cut();
      // The next live-cursor poll fails and the page says so.
      await outagePage.locator('[data-banner="database-down"]').waitFor();
      await relay.open();
      await outagePage.locator('[data-banner="database-down"]').waitFor({ state: 'detached' });
      await waitForText(outagePage.locator('[data-progress="done"]'), '1 / 1 settled');
    } finally {
      await outagePage.close();
      await outage.close();
      await db.destroy();
      await relay.cut();
    }
  });
});
