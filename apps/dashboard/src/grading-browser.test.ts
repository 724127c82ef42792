import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TasksRepository, type TaskOutcomeRecord } from '@benchfleet/db';
import {
  FINAL_SIGNAL_MAPPING_ID,
  OsworldGradesRepository,
  type OsworldGrade,
  type OsworldRunGradingRow,
  type OsworldSetupRecord,
} from '@benchfleet/osworld';
import { finalSignalOf, OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
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
import { writeFixtureRun } from '../test-support/run-fixtures.js';

// Graded OSWorld in the dashboard (issue 22), in Chromium: the grade beside the agent's word on
// the runs list, the run page (rates, the claimed × graded table, per domain, the task table) and
// the task page (the metric's inputs and verdict, the end-state files), each checked against the
// `osworld_*` views over the same database; a run nobody graded shows the agent's word only.

const services = useTestServices();
let sut: DashboardUnderTest;
let browser: HeadlessChromium;
let page: Page;

const REPORT = Buffer.from('not done\n');
let reportUri = '';

interface GradedTask {
  taskId: string;
  domain: string;
  /** Bytebot's final status: COMPLETED is the agent's claim of success. */
  status: 'COMPLETED' | 'NEEDS_HELP' | 'FAILED';
  /** undefined: never graded. */
  grade?: (finalStatus: string) => OsworldGrade;
}

function grade(
  score: number | null,
  finalStatus: string,
  overrides: Partial<OsworldGrade> = {},
): OsworldGrade {
  const finalSignal = finalSignalOf(finalStatus);
  return {
    score,
    pythonType: score === null ? null : 'float',
    gradedSuccess: score === null ? null : score === 1,
    noScoreCause: score === null ? 'exception' : null,
    reason: score === null ? 'TypeError: the metric raised' : null,
    fidelity: { level: 'graded' },
    metricVersion: OSWORLD_GRADING_VERSION,
    finalSignal,
    finalSignalMapping: FINAL_SIGNAL_MAPPING_ID,
    details: { finalSignal, postconfig: [], trace: [{ kind: 'postconfig', steps: 0 }] },
    endState: [],
    ...overrides,
  };
}

/** The lying agent's grade: it claimed COMPLETED, the end state's report says otherwise. */
function liarGrade(finalStatus: string): OsworldGrade {
  const finalSignal = finalSignalOf(finalStatus);
  return grade(0, finalStatus, {
    details: {
      finalSignal,
      postconfig: [{ number: 1, type: 'execute', outcome: 'done' }],
      trace: [
        { kind: 'postconfig', steps: 1 },
        {
          kind: 'getter',
          slot: { side: 'result', index: null },
          type: 'vm_file',
          config: { path: '/home/user/Desktop/report.txt', dest: 'report.txt' },
          output: '<CACHE>/report.txt',
        },
        {
          kind: 'getter',
          slot: { side: 'expected', index: null },
          type: 'rule',
          config: { rules: { expected: 'done' } },
          output: { expected: 'done' },
        },
        {
          kind: 'metric',
          index: null,
          name: 'exact_match',
          args: ['<CACHE>/report.txt', { expected: 'done' }],
          options: {},
          value: { type: 'float', value: 0 },
        },
      ],
    },
    endState: [
      {
        name: 'report.txt',
        sha256: createHash('sha256').update(REPORT).digest('hex'),
        size: REPORT.length,
        uri: reportUri,
      },
    ],
  });
}

const GRADED: GradedTask[] = [
  { taskId: 'os-pass', domain: 'os', status: 'COMPLETED', grade: (s) => grade(1, s) },
  { taskId: 'os-liar', domain: 'os', status: 'COMPLETED', grade: liarGrade },
  { taskId: 'os-never', domain: 'os', status: 'COMPLETED' },
  { taskId: 'vs-help', domain: 'vs_code', status: 'NEEDS_HELP', grade: (s) => grade(0, s) },
  { taskId: 'vs-modest', domain: 'vs_code', status: 'FAILED', grade: (s) => grade(1, s) },
  { taskId: 'tb-raised', domain: 'thunderbird', status: 'COMPLETED', grade: (s) => grade(null, s) },
  {
    taskId: 'tb-ungraded',
    domain: 'thunderbird',
    status: 'COMPLETED',
    grade: (s) =>
      grade(null, s, {
        noScoreCause: 'ungraded',
        reason: 'needs Chrome',
        fidelity: { level: 'ungraded', reason: 'needs Chrome', canSetUp: false },
      }),
  },
  {
    taskId: 'ma-partial',
    domain: 'multi_apps',
    status: 'COMPLETED',
    grade: (s) =>
      grade(0.5, s, {
        fidelity: { level: 'degraded', substitutions: ['firefox-for-chrome'] },
      }),
  },
];

/** What the flow records of the reset and the setup with an attempt's own grade. */
const SETUP: OsworldSetupRecord = {
  reset: {
    command: 'recreate desktop-1',
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    durationMs: 900,
    readyMs: 4_000,
  },
  setup: { steps: [{ number: 1, type: 'launch', outcome: 'done' }], downloads: [] },
  timings: { resetMs: 900, readyMs: 4_000, setupMs: 300, agentMs: 2_000, gradeMs: 200 },
};

function outcomeOf(status: GradedTask['status']): Omit<TaskOutcomeRecord, 'totalSteps'> {
  const success = status === 'COMPLETED';
  return {
    status: success ? 'success' : 'failed',
    success,
    reward: success ? 1 : 0,
    finalApiStatus: status,
    durationMs: 2_000,
    result: { stop_reason: 'end_status' },
  };
}

/**
 * An OSWorld run whose attempts are graded while they run (as the worker does), then settled;
 * `completed` tasks end COMPLETED whatever the table says.
 */
async function writeGradedRun(
  id: string,
  graded: boolean,
  completed: string[] = [],
): Promise<void> {
  await writeFixtureRun(services.db, sut.artifacts, {
    id,
    name: id,
    benchmark: 'osworld',
    model: { provider: 'anthropic', name: 'claude', title: 'Claude' },
    agent: { kind: 'bytebot' },
    tasks: GRADED.map((task) => ({
      taskId: task.taskId,
      domain: task.domain,
      instruction: `do ${task.taskId}`,
      attempts: [{ steps: [{ action: { tool_calls: [] }, text: 'done' }] }],
    })),
  });
  const grades = new OsworldGradesRepository(services.db);
  for (const task of GRADED) {
    if (graded && task.grade) {
      const written = await grades.recordAttemptGrade(
        { runId: id, taskId: task.taskId, attempt: 1 },
        task.grade(task.status),
        SETUP,
      );
      expect(written).toBe(true);
    }
    const status = completed.includes(task.taskId) ? 'COMPLETED' : task.status;
    await new TasksRepository(services.db).settle(
      id,
      task.taskId,
      1,
      { ...outcomeOf(status), totalSteps: 1 },
      true,
    );
  }
}

beforeAll(async () => {
  sut = await startDashboardUnderTest(services);
  reportUri = await sut.artifacts.put(
    ['run-graded', 'os-liar', 'attempt-1', 'end-state', 'report.txt'],
    REPORT,
  );
  await writeGradedRun('run-graded', true);
  await writeGradedRun('run-ungraded', false, ['vs-help']);
  browser = await launchChromium();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await sut?.close();
});

const url = (path: string) => `${sut.dashboard.url}${path}`;
const percent = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(1)}%`);

async function runGrading(runId: string): Promise<OsworldRunGradingRow> {
  const row = await new OsworldGradesRepository(services.db).runGrading(runId);
  if (!row) throw new Error(`no grading row for ${runId}`);
  return row;
}

describe('the grade beside the agent’s word', () => {
  it('shows the graded success rate next to the agent-reported one in the runs list, as osworld_run_grading', async () => {
    const view = await runGrading('run-graded');
    // The fixture's own arithmetic: 7 graded, 5 with a score (1, 0, 0, 1, 0.5); the agent claimed
    // os-pass (1), os-liar (0) and ma-partial (0.5), and did not claim vs-help (0) and vs-modest (1).
    expect(view).toMatchObject({
      graded: 7,
      scored: 5,
      claimed_and_passed: 1,
      claimed_but_failed: 2,
      unclaimed_but_passed: 1,
      unclaimed_and_failed: 1,
      graded_success_rate: 0.4,
      claimed_success_rate: 0.6,
      mean_score: 0.5,
    });
    await page.goto(url('/'));
    const cell = page.locator('tr[data-run="run-graded"] [data-cell="success-rate"]');
    await waitForText(cell, 'agent-reported');
    await waitForText(
      cell.locator('[data-cell="graded"]'),
      `${percent(view.graded_success_rate)} graded (${view.scored} scored)`,
    );
    await waitForText(
      page.locator('tr[data-run="run-ungraded"] [data-cell="success-rate"]'),
      'agent-reported',
    );
    expect(await page.locator('tr[data-run="run-ungraded"] [data-cell="graded"]').count()).toBe(0);
  });

  it("draws the run's claimed × graded table, rates and per-domain grades from the views", async () => {
    const view = await runGrading('run-graded');
    await page.goto(url('/runs/run-graded'));
    const table = page.locator('[data-table="claimed-graded"]');
    await table.waitFor();
    const cell = (claim: string, column: string) =>
      table.locator(`[data-claim="${claim}"] [data-${column}]`).textContent();
    expect(await cell('claimed', 'graded-pass')).toBe(String(view.claimed_and_passed));
    expect(await cell('claimed', 'graded-fail')).toBe(String(view.claimed_but_failed));
    expect(await cell('not-claimed', 'graded-pass')).toBe(String(view.unclaimed_but_passed));
    expect(await cell('not-claimed', 'graded-fail')).toBe(String(view.unclaimed_and_failed));
    await waitForText(
      page.locator('[data-field="grading-rates"]'),
      `agent-reported success ${percent(view.claimed_success_rate)}, graded success ${percent(view.graded_success_rate)}`,
    );
    await waitForText(
      page.locator('[data-field="grading-rates"] code'),
      view.mean_score?.toFixed(4) ?? '',
    );
    await waitForText(
      page.locator('[data-field="grading-coverage"]'),
      `${view.graded} of ${view.tasks} tasks graded; ${view.no_score} with no score, ${view.degraded} degraded`,
    );
    // The progress panel: the recorded rate, then the graded one and OSWorld's mean score.
    await waitForText(
      page.locator('[data-metric="graded-success-rate"] dd'),
      `${percent(view.graded_success_rate)} of ${view.scored} scored`,
    );
    expect(await page.locator('[data-metric="mean-score"] dd').textContent()).toBe(
      view.mean_score?.toFixed(4),
    );
    // The panel's SQL reads the view.
    await page.locator('[data-panel="claimed-graded"] .sql-toggle').click();
    await waitForText(
      page.locator('[data-panel="claimed-graded"] [data-sql="psql"]'),
      "from osworld_run_grading\nwhere run_id = 'run-graded'",
    );

    const domains = await new OsworldGradesRepository(services.db).domainGrading('run-graded');
    for (const domain of domains) {
      const row = page.locator(`tr[data-domain="${domain.domain}"]`);
      await waitForText(row.locator('[data-cell="scored"]'), String(domain.scored));
      expect(await row.locator('[data-cell="graded-success-rate"]').textContent()).toBe(
        percent(domain.graded_success_rate),
      );
      expect(await row.locator('[data-cell="mean-score"]').textContent()).toBe(
        domain.mean_score === null ? '–' : domain.mean_score.toFixed(4),
      );
    }
  });

  it('gives every task its grade in the task table, as osworld_task_grades', async () => {
    const grades = await new OsworldGradesRepository(services.db).taskGrades('run-graded');
    await page.goto(url('/runs/run-graded'));
    await waitForText(
      page.locator('[data-count="tasks"]'),
      `${GRADED.length} of ${GRADED.length} tasks`,
    );
    for (const task of grades) {
      const expected =
        task.grade_no === null ? '–' : task.score === null ? 'no score' : task.score.toFixed(3);
      expect(
        await page
          .locator(`.vgrid-row[data-task="${task.task_id}"] [data-column="grade"]`)
          .textContent(),
        task.task_id,
      ).toBe(expected);
    }
  });

  it("shows the lying agent's trajectory with the metric's inputs and verdict, and its end-state file", async () => {
    await page.goto(url('/runs/run-graded/tasks/os-liar'));
    await waitForText(page.locator('[data-field="success"]'), 'yes');
    await waitForText(page.locator('[data-field="grade"]'), '0.000 (failure)');
    await waitForText(
      page.locator('[data-field="grade-verdict"]'),
      'Score 0 (float): graded failure',
    );
    await waitForText(
      page.locator('[data-field="grade-claim"]'),
      'The agent ended with COMPLETED (agent-reported success); OSWorld’s final action: DONE (mapping bytebot-status-to-osworld-final-action/v1)',
    );
    await waitForText(page.locator('[data-field="grade-fidelity"]'), 'fidelity: graded');
    await waitForText(page.locator('[data-field="grade-version"]'), OSWORLD_GRADING_VERSION);
    await waitForText(page.locator('[data-field="grade-postconfig"]'), '1 step(s)');
    await waitForText(
      page.locator('[data-field="grade-setup"]'),
      'Before the agent: reset by recreate desktop-1 (exit 0); 1 config step(s), 0 download(s).',
    );
    const trace = page.locator('[data-table="grade-trace"] tbody tr');
    expect(await trace.count()).toBe(4);
    await waitForText(trace.nth(1).locator('[data-call]'), 'vm_file (result)');
    await waitForText(trace.nth(3).locator('[data-call]'), 'exact_match');
    await waitForText(trace.nth(3).locator('[data-result]'), '0 (float)');
    // The getter's output links the end-state file it fetched, served from the artifact store.
    const link = trace.nth(1).locator('a[data-artifact="report.txt"]');
    const href = await link.getAttribute('href');
    expect(href).toBeTruthy();
    const served = await fetch(url(href ?? ''));
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await served.text()).toBe(REPORT.toString());
    await page.locator('[data-field="end-state"] a[data-artifact="report.txt"]').waitFor();
    // Only what the task's panels link is served: another file of the store is not.
    const other = await sut.artifacts.put(
      ['run-graded', 'os-pass', 'secret.txt'],
      Buffer.from('x'),
    );
    const refused = await fetch(
      url(`/api/runs/run-graded/tasks/os-liar/artifact?uri=${encodeURIComponent(other)}`),
    );
    expect(refused.status).toBe(404);
  });

  it('says why a graded task has no score, and shows none for a task nobody graded', async () => {
    await page.goto(url('/runs/run-graded/tasks/tb-ungraded'));
    await waitForText(page.locator('[data-field="grade-verdict"]'), 'No score: ungraded');
    await waitForText(page.locator('[data-field="grade-fidelity"]'), 'needs Chrome');
    await waitForText(page.locator('[data-field="grade"]'), 'no score');
    await page.goto(url('/runs/run-graded/tasks/os-never'));
    await waitForText(page.locator('[data-field="success"]'), 'yes');
    expect(await page.locator('[data-panel="grade"]').count()).toBe(0);
    expect(await page.locator('[data-field="grade"]').count()).toBe(0);
  });

  it('shows only the agent’s word for a run nobody graded, as today', async () => {
    const [counts] = (
      await sql<{ grades: number }>`
        select count(*)::int as grades from osworld_grades where run_id = 'run-ungraded'`.execute(
        services.db,
      )
    ).rows;
    expect(counts?.grades).toBe(0);
    await page.goto(url('/runs/run-ungraded'));
    await waitForText(
      page.locator('[data-count="tasks"]'),
      `${GRADED.length} of ${GRADED.length} tasks`,
    );
    await waitForText(page.locator('[data-metric="success-rate"]'), 'agent-reported');
    expect(await page.locator('[data-metric="graded-success-rate"]').count()).toBe(0);
    expect(await page.locator('[data-panel="claimed-graded"]').count()).toBe(0);
    expect(await page.locator('[data-column="grade"]').count()).toBe(0);
    expect(await page.locator('[data-table="domains"] [data-cell="scored"]').count()).toBe(0);
    await page.goto(url('/runs/run-ungraded/tasks/os-liar'));
    await waitForText(page.locator('[data-field="success"]'), 'yes');
    expect(await page.locator('[data-panel="grade"]').count()).toBe(0);
  });

  it('puts each run’s grade beside the flipped tasks of a comparison', async () => {
    const response = (await (
      await fetch(url('/api/compare?a=run-graded&b=run-ungraded'))
    ).json()) as {
      grades: { a: Record<string, number | null> | null; b: unknown };
    };
    const grades = await new OsworldGradesRepository(services.db).taskGrades('run-graded');
    expect(response.grades.a).toEqual(
      Object.fromEntries(
        grades.filter((t) => t.grade_no !== null).map((t) => [t.task_id, t.score]),
      ),
    );
    expect(response.grades.b).toBeNull();
    // vs-help: the agent asked for help in A (graded 0), claimed success in B (not graded).
    await page.goto(url('/compare?a=run-graded&b=run-ungraded'));
    const flipped = page.locator('[data-table="flipped"] tr[data-task="vs-help"]');
    await waitForText(flipped, 'B only');
    expect(await flipped.locator('[data-cell="grade-a"]').textContent()).toBe('0.000');
    expect(await flipped.locator('[data-cell="grade-b"]').textContent()).toBe('–');
  });

  it('follows a regrade live: the task table, the table of claims and the task page show the newest grade', async () => {
    await page.goto(url('/runs/run-graded'));
    const cell = page.locator('.vgrid-row[data-task="vs-help"] [data-column="grade"]');
    await waitForText(cell, '0.000');
    const grades = new OsworldGradesRepository(services.db);
    const regraded = await grades.recordRegrade(
      { runId: 'run-graded', taskId: 'vs-help', attempt: 1 },
      { ...grade(1, 'NEEDS_HELP'), metricVersion: 'osworld-grading/test-next' },
      { regradedFrom: 1 },
    );
    expect(regraded).toEqual({ recorded: true, gradeNo: 2 });
    // No task started or settled: only the grade moved, and the open page follows it.
    await waitForText(cell, '1.000');
    const view = await runGrading('run-graded');
    expect(view.unclaimed_but_passed).toBe(2);
    await waitForText(
      page.locator('[data-table="claimed-graded"] [data-claim="not-claimed"] [data-graded-pass]'),
      '2',
    );
    await page.goto(url('/runs/run-graded/tasks/vs-help'));
    await waitForText(
      page.locator('[data-field="grade-version"]'),
      'Metric version osworld-grading/test-next; grade 2 of attempt 1 (regraded from grade 1)',
    );
    await waitForText(page.locator('[data-field="grade-setup"]'), 'Regrade: scored again');
  });
});
