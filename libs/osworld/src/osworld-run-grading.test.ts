import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunsRepository } from '@benchfleet/db';
import { OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import { useTestServices } from '@benchfleet/testing';
import {
  fixtureGrade,
  writeGradedOsworldRun,
  type FixtureGradedTask,
} from './graded-run-fixture.js';
import { OsworldGradesRepository } from './osworld-grades-repository.js';
import { GRADED_EXAMPLE_QUERIES } from './osworld-example-queries.js';
import {
  osworldAttemptGrades,
  osworldGradedSummary,
  osworldTaskGrades,
} from './osworld-run-grading.js';

// The graded numbers of a run and the example SQL over the grade views, on real rows.

const services = useTestServices();
const RUN = 'graded-numbers';
const tasks: FixtureGradedTask[] = [
  { taskId: 'os-right', domain: 'os', finalApiStatus: 'COMPLETED', grade: { score: 1 } },
  { taskId: 'os-liar', domain: 'os', finalApiStatus: 'COMPLETED', grade: { score: 0 } },
  {
    taskId: 'vs-infeasible',
    domain: 'vs_code',
    finalApiStatus: 'NEEDS_HELP',
    grade: { score: 1 },
    fidelity: { level: 'degraded', substitutions: ['xfce4-terminal-for-gnome-terminal'] },
  },
  { taskId: 'vs-failed', domain: 'vs_code', finalApiStatus: 'FAILED', grade: { score: 0 } },
  {
    taskId: 'vs-raised',
    domain: 'vs_code',
    finalApiStatus: 'COMPLETED',
    grade: { noScore: 'FileNotFoundError: settings.json' },
  },
];

function run(query: string, runId: string) {
  return sql
    .raw<Record<string, unknown>>(query.replaceAll(`:'run'`, `'${runId}'`))
    .execute(services.db)
    .then((result) => result.rows);
}

const byTitle = (title: string) => {
  const query = GRADED_EXAMPLE_QUERIES.find((q) => q.title === title);
  if (!query) throw new Error(`no example query "${title}"`);
  return query.sql;
};

beforeAll(async () => {
  await writeGradedOsworldRun(services.db, { id: RUN }, tasks);
  // The liar's end state scored again by a later port: 0.5 now.
  const liar = fixtureGrade({
    ...tasks[1]!,
    grade: { score: 0.5 },
    metricVersion: 'osworld-grading/9',
  });
  await new OsworldGradesRepository(services.db).recordRegrade(
    { runId: RUN, taskId: 'os-liar', attempt: 1 },
    liar!,
    { regradedFrom: 1 },
  );
  await writeGradedOsworldRun(services.db, { id: 'not-graded', graded: false }, [
    { taskId: 't1', domain: 'os', finalApiStatus: 'COMPLETED', grade: null },
  ]);
});

describe("a graded run's numbers", () => {
  it('both scores side by side: rates, the claimed × graded table, fidelity, per domain, versions', async () => {
    const row = await new RunsRepository(services.db).get(RUN);
    expect(await osworldGradedSummary(services.db, row!)).toEqual({
      label: expect.stringContaining("OSWorld's evaluate()"),
      metric_versions: [OSWORLD_GRADING_VERSION, 'osworld-grading/9'],
      final_signal_mappings: ['bytebot-status-to-osworld-final-action/v1'],
      tasks: 5,
      graded: 5,
      scored: 4,
      no_score: 1,
      fidelity: { graded: 4, degraded: 1, ungraded: 0 },
      mean_score: 0.625,
      graded_success_rate: 0.5,
      claimed_success_rate: 0.5,
      claimed_vs_graded: {
        claimed_and_passed: 1,
        claimed_but_failed: 1,
        unclaimed_but_passed: 1,
        unclaimed_and_failed: 1,
      },
      per_domain: {
        os: {
          tasks: 2,
          scored: 2,
          no_score: 0,
          mean_score: 0.75,
          graded_success_rate: 0.5,
          claimed_success_rate: 1,
        },
        vs_code: {
          tasks: 3,
          scored: 2,
          no_score: 1,
          mean_score: 0.5,
          graded_success_rate: 0.5,
          claimed_success_rate: 0,
        },
      },
    });
  });

  it('a run without --grade and without grades has none', async () => {
    const row = await new RunsRepository(services.db).get('not-graded');
    expect(await osworldGradedSummary(services.db, row!)).toBeNull();
  });

  it("each task's latest grade, and each attempt's with the metric's details", async () => {
    const byTask = await osworldTaskGrades(services.db, RUN);
    expect(byTask.get('os-liar')).toMatchObject({
      score: 0.5,
      success: false,
      record: { grade_no: 2, regraded_from: 1, metric_version: 'osworld-grading/9' },
    });
    expect(byTask.get('vs-raised')).toMatchObject({
      score: null,
      success: null,
      record: { no_score_cause: 'exception', reason: 'FileNotFoundError: settings.json' },
    });
    const byAttempt = await osworldAttemptGrades(services.db, RUN);
    expect(byAttempt.get('vs-infeasible#1')?.record).toMatchObject({
      score: 1,
      fidelity: 'degraded',
      substitutions: ['xfce4-terminal-for-gnome-terminal'],
      final_signal: 'FAIL',
      details: { finalSignal: { action: 'FAIL', bytebotStatus: 'NEEDS_HELP' } },
    });
  });
});

describe('the graded example queries', () => {
  it('agent-reported against graded success', async () => {
    expect(await run(byTitle('Agent-reported against graded success'), RUN)).toEqual([
      {
        name: RUN,
        tasks: 5,
        scored: 4,
        no_score: 1,
        claimed_success_rate: 0.5,
        graded_success_rate: 0.5,
        mean_score: 0.625,
        claimed_and_passed: 1,
        claimed_but_failed: 1,
        unclaimed_but_passed: 1,
        unclaimed_and_failed: 1,
      },
    ]);
  });

  it('false claims', async () => {
    const rows = await run(
      byTitle('False claims: tasks the agent called done that the grade failed'),
      RUN,
    );
    expect(rows).toEqual([
      {
        task_id: 'os-liar',
        domain: 'os',
        final_api_status: 'COMPLETED',
        score: 0.5,
        fidelity: 'graded',
        metric_version: 'osworld-grading/9',
      },
    ]);
  });

  it('graded score by domain', async () => {
    const rows = await run(byTitle('Graded score by domain'), RUN);
    expect(rows.map((r) => [r.domain, r.tasks, r.scored, r.mean_score])).toEqual([
      ['os', 2, 2, 0.75],
      ['vs_code', 3, 2, 0.5],
    ]);
  });

  it('graded tasks without a score', async () => {
    expect(await run(byTitle('Graded tasks without a score, and why'), RUN)).toEqual([
      {
        task_id: 'vs-raised',
        domain: 'vs_code',
        fidelity: 'graded',
        no_score_cause: 'exception',
        reason: 'FileNotFoundError: settings.json',
      },
    ]);
  });

  it('scores a regrade changed, in psql as README shows it', async () => {
    const psql = spawnSync(
      'psql',
      [services.databaseUrl, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-v', `run=${RUN}`],
      { input: byTitle('Scores a regrade changed'), encoding: 'utf8' },
    );
    expect(psql.error).toBeUndefined();
    expect(psql.stderr).toBe('');
    expect(psql.stdout.trim()).toBe(`os-liar|${OSWORLD_GRADING_VERSION}|0|osworld-grading/9|0.5`);
  });
});

describe('the graded example queries in README.md', () => {
  it('are in README.md word for word', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    for (const query of GRADED_EXAMPLE_QUERIES) {
      expect(readme).toContain(`**${query.title}**`);
      expect(readme).toContain(query.sql.trim());
    }
  });
});
