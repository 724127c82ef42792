import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunsRepository } from '@benchfleet/db';
import { useTestServices } from '@benchfleet/testing';
import type { ShownQuery } from '../shared/shown-query.js';
import { useDashboardInChromium } from '../test-support/dashboard-in-chromium.js';
import { waitForText } from '../test-support/headless-chromium.js';
import { writeFixtureRun, type FixtureTask } from '../test-support/run-fixtures.js';

// A run's limits on the dashboard (issue 23), in Chromium: the fence (stopped at its spend limit;
// paused on infra errors, with the command that resumes it), both scores and the counts behind
// them, the spend against the run's limit and per-task limit with the overshoot ("unpriced", never
// $0, when the model has no price), budget stops as their own class in the Failures panel, and the
// Show SQL of each. Every number is checked against SQL over the same database.

const services = useTestServices();
const dash = useDashboardInChromium(services);
let page: Page;

const BUDGET_REASON = 'the run spend limit of $0.10 is reached ($0.18 spent)';
let infraReason = '';

type Outcome = NonNullable<NonNullable<FixtureTask['attempts']>[number]['outcome']>;

function task(index: number, outcome?: Partial<Outcome>): FixtureTask {
  const base = { taskId: `goal-${index}`, domain: 'd', instruction: `goal ${index}` };
  if (!outcome) return base;
  return {
    ...base,
    attempts: [
      {
        steps: [{ action: { action: 'search[x]', kind: 'search', valid: true } }],
        outcome: { status: 'success', success: true, reward: 1, durationMs: 100, ...outcome },
      },
    ],
  };
}

const failedByAgent = { status: 'failed', success: false, reward: 0 } as const;
const infraError = (costUsd: number | null) =>
  ({
    status: 'error',
    errorClass: 'infra',
    success: null,
    reward: null,
    costUsd,
    error: 'provider 500',
  }) as const;

beforeAll(async () => {
  // A priced run with a run limit of $0.10 and a task limit of $0.05: two successes (one past the
  // task limit), an agent failure, an infra error, a task its limit stopped while it ran, and two
  // queued tasks the run's fence ends as budget stops.
  await writeFixtureRun(services.db, dash.sut.artifacts, {
    id: 'run-budget',
    name: 'webshop-budget',
    benchmark: 'webshop',
    agent: { kind: 'llm', model: 'gpt-test' },
    limits: {
      max_cost_usd: 0.1,
      max_task_cost_usd: 0.05,
      model_price: { inputUsdPerMillion: 2, outputUsdPerMillion: 8 },
    },
    tasks: [
      task(0, { costUsd: 0.04 }),
      task(1, { costUsd: 0.08 }),
      task(2, { ...failedByAgent, costUsd: 0.02 }),
      task(3, infraError(0.01)),
      task(4, {
        status: 'error',
        errorClass: 'budget',
        success: null,
        reward: null,
        finalApiStatus: 'BUDGET',
        costUsd: 0.03,
        error: 'budget: the run spend limit of $0.10 is reached',
        result: { stop_reason: 'budget' },
      }),
      task(5),
      task(6),
    ],
  });
  const runs = new RunsRepository(services.db);
  expect(await runs.haltForBudget('run-budget', BUDGET_REASON)).toEqual({
    fenced: true,
    tasksEnded: 2,
  });
  // An unpriced run with an infra-error budget of 25 % over 4 tasks: three infra errors pause it.
  await writeFixtureRun(services.db, dash.sut.artifacts, {
    id: 'run-paused',
    name: 'webshop-paused',
    benchmark: 'webshop',
    agent: { kind: 'llm', model: 'no-price' },
    limits: { max_infra_error_rate: 0.25, infra_window: 4, model_price: null },
    tasks: [
      task(0, { costUsd: null }),
      task(1, infraError(null)),
      task(2, infraError(null)),
      task(3, infraError(null)),
      task(4),
      task(5),
    ],
  });
  const paused = await runs.haltOnInfraErrors('run-paused');
  expect(paused).toMatchObject({ infraFailed: 3, window: 4 });
  infraReason = paused!.reason;
  page = await dash.browser.newPage();
});

const url = dash.url;

/** As the dashboard writes money and shares (web/src/format.ts). */
const usdText = (value: number) =>
  value === 0 ? '$0' : value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
const percentText = (value: number) => `${(value * 100).toFixed(1)}%`;

interface SummaryRow {
  success_rate: number;
  success_rate_excluding_infra: number;
  infra_failed: number;
  budget_stopped: number;
  cost_usd: number | null;
  projected_cost_usd: number | null;
  halt: string | null;
  halt_reason: string | null;
}

async function summaryOf(runId: string): Promise<SummaryRow> {
  const { rows } = await sql<SummaryRow>`
    select success_rate, success_rate_excluding_infra, infra_failed, budget_stopped, cost_usd,
           projected_cost_usd, halt, halt_reason
    from run_summary where run_id = ${runId}`.execute(services.db);
  return rows[0]!;
}

/** The scores straight from the tasks, not through run_summary. */
async function scoresFromTasks(runId: string) {
  const { rows } = await sql<{ settled: number; succeeded: number; infra: number; budget: number }>`
    select count(*) filter (where status in ('success', 'failed', 'cancelled', 'error'))::int as settled,
           count(*) filter (where status = 'success')::int as succeeded,
           count(*) filter (where status = 'error' and error_class = 'infra')::int as infra,
           count(*) filter (where status = 'error' and error_class = 'budget')::int as budget
    from tasks where run_id = ${runId}`.execute(services.db);
  const row = rows[0]!;
  return {
    ...row,
    withInfra: row.succeeded / row.settled,
    excludingInfra: row.succeeded / (row.settled - row.infra - row.budget),
  };
}

async function metric(name: string): Promise<string> {
  const dd = page.locator(`[data-metric="${name}"] dd`);
  await dd.waitFor({ state: 'visible' });
  return (await dd.textContent()) ?? '';
}

async function runsShownSql(path: string): Promise<ShownQuery[]> {
  const response = await fetch(url(path));
  expect(response.status).toBe(200);
  return ((await response.json()) as { queries: ShownQuery[] }).queries;
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe("a run's fence", () => {
  it('says a run stopped at its spend limit, with the reason the database holds', async () => {
    const summary = await summaryOf('run-budget');
    expect(summary).toMatchObject({ halt: 'budget', halt_reason: BUDGET_REASON });
    await page.goto(url('/runs/run-budget'));
    const banner = page.locator('[data-banner="halt"]');
    await waitForText(banner, 'This run stopped at its spend limit');
    expect(await banner.getAttribute('data-halt')).toBe('budget');
    expect(await banner.locator('[data-field="halt-reason"]').textContent()).toBe(BUDGET_REASON);
    // A spend-limit fence is not lifted by resume: no command offered.
    expect(await banner.locator('[data-field="resume-command"]').count()).toBe(0);
  });

  it('says a run is paused on infrastructure errors, why, and the command that resumes it', async () => {
    const summary = await summaryOf('run-paused');
    expect(summary.halt).toBe('infra');
    expect(summary.halt_reason).toBe(infraReason);
    expect(infraReason).toContain('3 of the last 4 settled tasks failed on infrastructure');
    await page.goto(url('/runs/run-paused'));
    const banner = page.locator('[data-banner="halt"]');
    await waitForText(banner, 'This run is paused on infrastructure errors');
    expect(await banner.locator('[data-field="halt-reason"]').textContent()).toBe(infraReason);
    expect(await banner.locator('[data-field="resume-command"]').textContent()).toBe(
      'npx scheduler resume run-paused',
    );
  });
});

describe('both scores', () => {
  it('shows on the run page the success rate with infra failures counted, and excluded, and the counts behind them', async () => {
    for (const runId of ['run-budget', 'run-paused']) {
      const summary = await summaryOf(runId);
      const fromTasks = await scoresFromTasks(runId);
      expect(summary.success_rate).toBeCloseTo(fromTasks.withInfra, 4);
      expect(summary.success_rate_excluding_infra).toBeCloseTo(fromTasks.excludingInfra, 4);
      expect([summary.infra_failed, summary.budget_stopped]).toEqual([
        fromTasks.infra,
        fromTasks.budget,
      ]);
      await page.goto(url(`/runs/${runId}`));
      expect(await metric('success-rate')).toBe(percentText(fromTasks.withInfra));
      expect(await metric('success-rate-excluding-infra')).toBe(
        percentText(fromTasks.excludingInfra),
      );
      expect(await metric('infra-failed')).toBe(String(fromTasks.infra));
      expect(await metric('budget-stopped')).toBe(String(fromTasks.budget));
    }
    // The fixtures as designed: 2 of 7 settled succeeded, 2 of the 3 the agent decided.
    const budget = await scoresFromTasks('run-budget');
    expect(budget).toMatchObject({ settled: 7, succeeded: 2, infra: 1, budget: 3 });
    expect(percentText(budget.excludingInfra)).toBe('66.7%');
  });

  it('shows both scores, the counts and the fence in the runs list', async () => {
    await page.goto(url('/'));
    for (const runId of ['run-budget', 'run-paused']) {
      const fromTasks = await scoresFromTasks(runId);
      const row = page.locator(`tr[data-run="${runId}"]`);
      await waitForText(
        row.locator('[data-cell="success-rate"]'),
        percentText(fromTasks.withInfra),
      );
      await waitForText(
        row.locator('[data-cell="success-excluding-infra"]'),
        `${percentText(fromTasks.excludingInfra)} infra excluded`,
      );
      expect(await row.locator('[data-cell="not-the-agents"]').textContent()).toBe(
        `${fromTasks.infra} infra-failed · ${fromTasks.budget} budget-stopped`,
      );
    }
    const budgetHalt = page.locator('tr[data-run="run-budget"] [data-cell="halt"]');
    expect(await budgetHalt.textContent()).toBe('stopped at its spend limit');
    expect(await budgetHalt.getAttribute('title')).toBe(BUDGET_REASON);
    const infraHalt = page.locator('tr[data-run="run-paused"] [data-cell="halt"]');
    expect(await infraHalt.textContent()).toBe('paused on infra errors');
    expect(await infraHalt.getAttribute('title')).toBe(infraReason);
  });
});

describe('spend against the limits', () => {
  it('shows the spend, the run limit and its overshoot, the task limit and the tasks past it, as SQL over the tasks gives them', async () => {
    const { rows } = await sql<{ spent: number; over_task: number; worst_over: number }>`
      select sum(cost_usd)::float8 as spent,
             count(*) filter (where cost_usd > 0.05)::int as over_task,
             (max(cost_usd) - 0.05)::float8 as worst_over
      from tasks where run_id = 'run-budget'`.execute(services.db);
    const { spent, over_task: overTask, worst_over: worstOver } = rows[0]!;
    expect(spent).toBeCloseTo(0.18, 10);
    expect(overTask).toBe(1);
    const summary = await summaryOf('run-budget');
    expect(summary.cost_usd).toBeCloseTo(spent, 10);
    await page.goto(url('/runs/run-budget'));
    expect(await metric('limit-spent')).toBe(usdText(spent));
    expect(await metric('run-limit')).toBe('$0.10');
    expect(await metric('run-overshoot')).toBe(`${usdText(spent - 0.1)} over`);
    expect(await metric('task-limit')).toBe('$0.05');
    expect(await metric('task-overshoot')).toBe(`1 task(s), worst ${usdText(worstOver)} over`);
    expect(await metric('limit-projected')).toBe(usdText(summary.projected_cost_usd!));
    expect(await metric('infra-budget')).toBe('none');
    // The runs list: the same spend, limits and overshoot.
    await page.goto(url('/'));
    const cost = page.locator('tr[data-run="run-budget"] [data-cell="cost"]');
    await waitForText(cost.locator('[data-cell="spent"]'), usdText(spent));
    expect(await cost.locator('[data-cell="run-limit"]').textContent()).toBe(
      `limit $0.10 · ${usdText(spent - 0.1)} over`,
    );
    expect(await cost.locator('[data-cell="task-limit"]').textContent()).toBe(
      `task limit $0.05 · 1 task(s), worst ${usdText(worstOver)} over`,
    );
  });

  it('says "unpriced", never $0, for a run whose model has no price, and shows its infra-error budget', async () => {
    const { rows } = await sql<{ limits: { model_price: unknown } }>`
      select limits from runs where id = 'run-paused'`.execute(services.db);
    expect(rows[0]?.limits.model_price).toBeNull();
    expect((await summaryOf('run-paused')).cost_usd).toBeNull();
    await page.goto(url('/runs/run-paused'));
    expect(await metric('limit-spent')).toBe('unpriced');
    expect(await metric('cost')).toBe('unpriced');
    expect(await metric('limit-projected')).toBe('unpriced');
    expect(await metric('run-limit')).toBe('none');
    expect(await metric('infra-budget')).toBe('25.0% of the last 4 settled tasks');
    await page.goto(url('/'));
    const cost = page.locator('tr[data-run="run-paused"] [data-cell="cost"]');
    await waitForText(cost.locator('[data-cell="spent"]'), 'unpriced');
    expect(await cost.textContent()).not.toContain('$');
  });
});

describe('the Failures panel', () => {
  it('groups spend-limit stops under their own class, budget, apart from agent failures and infra errors', async () => {
    const { rows } = await sql<{ task_id: string; error_class: string | null; status: string }>`
      select task_id, error_class, status from tasks
      where run_id = 'run-budget' and status <> 'success' order by task_id`.execute(services.db);
    const budgetTasks = rows.filter((r) => r.error_class === 'budget').map((r) => r.task_id);
    expect(budgetTasks).toEqual(['goal-4', 'goal-5', 'goal-6']);
    await page.goto(url('/runs/run-budget'));
    const table = page.locator('[data-table="failures"]');
    await waitForText(table, 'budget');
    const classes = await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        cls: tr.getAttribute('data-class'),
        tasks: Number(tr.querySelector('td.num')?.textContent),
        examples: [...tr.querySelectorAll('a.example')].map((a) => a.textContent),
      })),
    );
    const budgetRows = classes.filter((row) => row.cls === 'budget');
    expect(budgetRows.reduce((sum, row) => sum + row.tasks, 0)).toBe(budgetTasks.length);
    expect(budgetRows.flatMap((row) => row.examples).sort()).toEqual(budgetTasks);
    // The infra error and the agent's failure keep their own classes, with none of the budget stops.
    expect(classes.filter((row) => row.cls === 'infra').flatMap((row) => row.examples)).toEqual([
      'goal-3',
    ]);
    expect(classes.filter((row) => row.cls === 'agent').flatMap((row) => row.examples)).toEqual([
      'goal-2',
    ]);
  });
});

describe('Show SQL', () => {
  it('gives, for the run page and the runs list, the query that returns exactly the numbers shown', async () => {
    const response = await fetch(url('/api/runs/run-budget'));
    const body = (await response.json()) as {
      run: Record<string, unknown>;
      queries: ShownQuery[];
    };
    const [runQuery] = body.queries;
    expect(runQuery?.name).toBe('run');
    const shownRows = (await sql.raw<Record<string, unknown>>(runQuery!.psql).execute(services.db))
      .rows;
    const withoutClock = (row: Record<string, unknown> | undefined) => ({ ...row, as_of: null });
    expect(plain(withoutClock(shownRows[0]))).toEqual(withoutClock(body.run));
    expect(body.run).toMatchObject({
      halt: 'budget',
      max_cost_usd: 0.1,
      max_task_cost_usd: 0.05,
      tasks_over_limit: 1,
      budget_stopped: 3,
      infra_failed: 1,
      unpriced: false,
    });
    // In the browser: the limits panel's Show SQL is that query, for this run.
    await page.goto(url('/runs/run-budget'));
    await page.locator('[data-panel="limits"] .sql-toggle').click();
    await waitForText(
      page.locator('[data-panel="limits"] [data-query="run"] [data-sql="psql"]'),
      "s.run_id = 'run-budget'",
    );
    await waitForText(
      page.locator('[data-panel="limits"] [data-query="run"] [data-sql="psql"]'),
      'success_rate_excluding_infra',
    );
    // The failures panel's query, run as shown, gives its budget group.
    const panels = (await (await fetch(url('/api/runs/run-budget/panels'))).json()) as {
      failures: { rows: { error_class: string; tasks: number }[]; query: ShownQuery };
    };
    const failureRows = (
      await sql.raw<Record<string, unknown>>(panels.failures.query.psql).execute(services.db)
    ).rows;
    expect(plain(failureRows)).toEqual(panels.failures.rows);
    expect(
      panels.failures.rows
        .filter((row) => row.error_class === 'budget')
        .reduce((sum, row) => sum + row.tasks, 0),
    ).toBe(3);
    // The runs list's query, run as shown.
    const [listQuery] = await runsShownSql('/api/runs');
    const list = (await (await fetch(url('/api/runs'))).json()) as { runs: unknown[] };
    const listRows = (await sql.raw(listQuery!.psql).execute(services.db)).rows;
    expect(plain(listRows)).toEqual(list.runs);
  });
});

describe('resume', () => {
  it('lifts the infra pause, and the open run page drops its banner live', async () => {
    await page.goto(url('/runs/run-paused'));
    await waitForText(page.locator('[data-banner="halt"]'), 'paused on infrastructure errors');
    // What `scheduler resume` does to the fence.
    expect(await new RunsRepository(services.db).liftInfraHalt('run-paused')).toBe(true);
    expect((await summaryOf('run-paused')).halt).toBeNull();
    await page.locator('[data-banner="halt"]').waitFor({ state: 'detached' });
    await page.goto(url('/'));
    await waitForText(page.locator('tr[data-run="run-paused"] [data-cell="success-rate"]'), '%');
    expect(await page.locator('tr[data-run="run-paused"] [data-cell="halt"]').count()).toBe(0);
  });
});
