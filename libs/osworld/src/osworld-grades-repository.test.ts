import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { RunsRepository, TasksRepository, type Database } from '@benchfleet/db';
import { finalSignalOf, OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import { useTestServices } from '@benchfleet/testing';
import {
  FINAL_SIGNAL_MAPPING_ID,
  type OsworldGrade,
  type OsworldSetupRecord,
} from './osworld-grade.js';
import { OsworldGradesRepository } from './osworld-grades-repository.js';

const services = useTestServices();

let runNumber = 0;

/** A run of OSWorld tasks with the given domains, each task's first attempt open. */
async function startRun(
  db: Database,
  domains: string[],
): Promise<{ runId: string; taskIds: string[] }> {
  const runId = `grades-run-${++runNumber}`;
  const taskIds = domains.map((_, index) => `task-${index + 1}`);
  await new RunsRepository(db).createWithTasks({
    run: { id: runId, name: runId, benchmark: 'osworld', code_version: 'test', config: '{}' },
    tasks: taskIds.map((taskId, index) => ({
      task_id: taskId,
      seq: index,
      domain: domains[index]!,
      instruction: `do ${taskId}`,
      spec: JSON.stringify({ task_id: taskId }),
    })),
  });
  for (const taskId of taskIds)
    await new TasksRepository(db).openAttempt(runId, taskId, 'stack-1', 1);
  return { runId, taskIds };
}

/** Settles an attempt with the agent's word (COMPLETED = success, as the original scripts). */
async function settle(
  db: Database,
  runId: string,
  taskId: string,
  attempt: number,
  bytebotStatus: string,
): Promise<void> {
  const success = bytebotStatus === 'COMPLETED';
  await new TasksRepository(db).settle(runId, taskId, attempt, {
    status: success ? 'success' : bytebotStatus === 'CANCELLED' ? 'cancelled' : 'failed',
    finalApiStatus: bytebotStatus,
    totalSteps: 3,
    success,
    reward: success ? 1 : 0,
    durationMs: 1_000,
  });
}

/** What the flow records with an attempt's own grade. */
const setupRecord: OsworldSetupRecord = {
  reset: {
    command: 'recreate desktop-1',
    exitCode: 0,
    signal: null,
    stdout: 'recreated\n',
    stderr: '',
    durationMs: 900,
    readyMs: 4_000,
  },
  setup: {
    steps: [{ number: 1, type: 'download', outcome: 'done' }],
    downloads: [
      {
        url: 'https://x/a',
        path: '/home/user/a',
        sha256: 'b'.repeat(64),
        size: 1,
        fromCache: false,
      },
    ],
  },
  timings: { resetMs: 900, readyMs: 4_000, setupMs: 300, agentMs: 60_000, gradeMs: 200 },
};

function grade(
  score: number | null,
  bytebotStatus = 'COMPLETED',
  overrides: Partial<OsworldGrade> = {},
): OsworldGrade {
  const finalSignal = finalSignalOf(bytebotStatus);
  return {
    score,
    pythonType: score === null ? null : 'float',
    gradedSuccess: score === null ? null : score === 1,
    noScoreCause: score === null ? 'exception' : null,
    reason: score === null ? 'TypeError: boom' : null,
    fidelity: { level: 'graded' },
    metricVersion: OSWORLD_GRADING_VERSION,
    finalSignal,
    finalSignalMapping: FINAL_SIGNAL_MAPPING_ID,
    details: { finalSignal, postconfig: [], trace: [{ kind: 'postconfig', steps: 0 }] },
    endState: [{ name: 'log.txt', sha256: 'a'.repeat(64), size: 3, uri: 'file:///x/log.txt' }],
    ...overrides,
  };
}

describe('OsworldGradesRepository', () => {
  it("writes an attempt's grade once, only while the attempt runs; a second write changes nothing", async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, ['os', 'os']);
    const [first, second] = taskIds as [string, string];
    expect(
      await sut.recordAttemptGrade({ runId, taskId: first, attempt: 1 }, grade(1), setupRecord),
    ).toBe(true);
    expect(await sut.recordAttemptGrade({ runId, taskId: first, attempt: 1 }, grade(0), null)).toBe(
      false,
    );
    const rows = await sut.gradesOfTask(runId, first);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      attempt: 1,
      grade_no: 1,
      regraded_from: null,
      score: 1,
      python_type: 'float',
      final_signal: 'DONE',
      bytebot_status: 'COMPLETED',
      final_signal_mapping: 'bytebot-status-to-osworld-final-action/v1',
      metric_version: OSWORLD_GRADING_VERSION,
      fidelity: 'graded',
      substitutions: [],
      details: { trace: [{ kind: 'postconfig', steps: 0 }] },
      end_state: [{ name: 'log.txt', uri: 'file:///x/log.txt' }],
      setup: setupRecord,
    });

    // A settled attempt (or one closed as lost) takes no late grade.
    await settle(services.db, runId, second, 1, 'COMPLETED');
    expect(
      await sut.recordAttemptGrade({ runId, taskId: second, attempt: 1 }, grade(1), null),
    ).toBe(false);
    expect(await sut.gradesOfTask(runId, second)).toEqual([]);
    // An attempt that does not exist: no row, no error.
    expect(await sut.recordAttemptGrade({ runId, taskId: first, attempt: 7 }, grade(1), null)).toBe(
      false,
    );
  });

  it('keeps fidelity, substitutions and the no-score cause as columns; the database refuses a score with a cause', async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, ['multi_apps', 'os']);
    const [degraded, ungraded] = taskIds as [string, string];
    await sut.recordAttemptGrade(
      { runId, taskId: degraded, attempt: 1 },
      grade(0.5, 'COMPLETED', {
        fidelity: { level: 'degraded', substitutions: ['firefox-for-chrome'] },
      }),
      null,
    );
    await sut.recordAttemptGrade(
      { runId, taskId: ungraded, attempt: 1 },
      grade(null, 'NEEDS_HELP', {
        fidelity: { level: 'ungraded', reason: "metric 'x' is not ported", canSetUp: true },
        noScoreCause: 'ungraded',
        reason: "metric 'x' is not ported",
      }),
      null,
    );
    expect((await sut.gradesOfTask(runId, degraded))[0]).toMatchObject({
      fidelity: 'degraded',
      substitutions: ['firefox-for-chrome'],
      score: 0.5,
    });
    expect((await sut.gradesOfTask(runId, ungraded))[0]).toMatchObject({
      fidelity: 'ungraded',
      fidelity_reason: "metric 'x' is not ported",
      score: null,
      python_type: null,
      no_score_cause: 'ungraded',
      final_signal: 'FAIL',
      bytebot_status: 'NEEDS_HELP',
    });
    await expect(
      sql`update osworld_grades set score = 1 where run_id = ${runId} and task_id = ${ungraded}`.execute(
        services.db,
      ),
    ).rejects.toThrow(/osworld_grades_score_or_cause|osworld_grades_score_type/);
  });

  it('the views: the agent’s word next to the grade, the claimed × graded table per run, graded means per domain', async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, [
      'os',
      'os',
      'os',
      'vs_code',
      'vs_code',
      'multi_apps',
    ]);
    const outcomes: Array<[string, number | null]> = [
      ['COMPLETED', 1], // claimed and passed
      ['COMPLETED', 0], // the agent lies
      ['NEEDS_HELP', 1], // an infeasible task given up on: graded 1
      ['CANCELLED', 0], // step limit, end state wrong
      ['COMPLETED', 0.5], // partial score: not a graded success
      ['COMPLETED', null], // evaluate() raised: no score
    ];
    for (const [index, [status, score]] of outcomes.entries()) {
      const taskId = taskIds[index]!;
      await sut.recordAttemptGrade({ runId, taskId, attempt: 1 }, grade(score, status), null);
      await settle(services.db, runId, taskId, 1, status);
    }
    const tasks = await sut.taskGrades(runId);
    expect(
      tasks.map((row) => [row.task_id, row.claimed_success, row.score, row.graded_success]),
    ).toEqual([
      ['task-1', true, 1, true],
      ['task-2', true, 0, false],
      ['task-3', false, 1, true],
      ['task-4', false, 0, false],
      ['task-5', true, 0.5, false],
      ['task-6', true, null, null],
    ]);
    expect(await sut.runGrading(runId)).toEqual({
      run_id: runId,
      name: runId,
      tasks: 6,
      graded: 6,
      scored: 5,
      no_score: 1,
      degraded: 0,
      ungraded: 0,
      claimed_and_passed: 1,
      claimed_but_failed: 2,
      unclaimed_but_passed: 1,
      unclaimed_and_failed: 1,
      claimed_success_rate: 0.6,
      graded_success_rate: 0.4,
      mean_score: 0.5,
      upstream_graded: 0,
      grader_disagreements: 0,
    });
    expect(await sut.domainGrading(runId)).toEqual([
      {
        run_id: runId,
        domain: 'multi_apps',
        tasks: 1,
        scored: 0,
        no_score: 1,
        mean_score: null,
        graded_success_rate: null,
        claimed_success_rate: null,
      },
      {
        run_id: runId,
        domain: 'os',
        tasks: 3,
        scored: 3,
        no_score: 0,
        mean_score: 0.6667,
        graded_success_rate: 0.6667,
        claimed_success_rate: 0.6667,
      },
      {
        run_id: runId,
        domain: 'vs_code',
        tasks: 2,
        scored: 2,
        no_score: 0,
        mean_score: 0.25,
        graded_success_rate: 0,
        claimed_success_rate: 0.5,
      },
    ]);
  });

  it('a regrade adds a row after the latest, once per metric version; the task shows the latest', async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, ['os']);
    const key = { runId, taskId: taskIds[0]!, attempt: 1 };
    await sut.recordAttemptGrade(
      key,
      grade(0, 'COMPLETED', { metricVersion: 'osworld-grading/1' }),
      null,
    );
    await settle(services.db, runId, key.taskId, 1, 'COMPLETED');

    expect(await sut.recordRegrade(key, grade(1), { regradedFrom: 1 })).toEqual({
      recorded: true,
      gradeNo: 2,
    });
    // Same metric version again: nothing new to say.
    expect(await sut.recordRegrade(key, grade(1), { regradedFrom: 1 })).toEqual({
      recorded: false,
    });
    expect(await sut.recordRegrade(key, grade(1), { regradedFrom: 1, force: true })).toEqual({
      recorded: true,
      gradeNo: 3,
    });
    // Only from a grade that exists.
    expect(
      await sut.recordRegrade(key, grade(1, 'COMPLETED', { metricVersion: 'v9' }), {
        regradedFrom: 5,
      }),
    ).toEqual({ recorded: false });
    expect(
      (await sut.gradesOfTask(runId, key.taskId)).map((row) => [
        row.grade_no,
        row.regraded_from,
        row.metric_version,
        row.score,
      ]),
    ).toEqual([
      [1, null, 'osworld-grading/1', 0],
      [2, 1, OSWORLD_GRADING_VERSION, 1],
      [3, 1, OSWORLD_GRADING_VERSION, 1],
    ]);
    const [row] = await sut.taskGrades(runId);
    expect(row).toMatchObject({ grade_no: 3, regraded_from: 1, score: 1, graded_success: true });
    const [source] = await sut.regradeSources(runId);
    expect(source).toMatchObject({
      task_id: key.taskId,
      attempt: 1,
      original: { grade_no: 1, metric_version: 'osworld-grading/1' },
      latest_metric_version: OSWORLD_GRADING_VERSION,
    });
  });

  it("a task's grade is the one of the attempt its outcome comes from", async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, ['os']);
    const taskId = taskIds[0]!;
    // Attempt 1 was graded, then lost before it settled; attempt 2 is still running.
    await sut.recordAttemptGrade({ runId, taskId, attempt: 1 }, grade(1), null);
    await new TasksRepository(services.db).openAttempt(runId, taskId, 'stack-2', 2);
    expect((await sut.taskGrades(runId))[0]).toMatchObject({ attempt: 2, grade_no: null });
    await sut.recordAttemptGrade({ runId, taskId, attempt: 2 }, grade(0), null);
    await settle(services.db, runId, taskId, 2, 'COMPLETED');
    expect((await sut.taskGrades(runId))[0]).toMatchObject({
      attempt: 2,
      grade_no: 1,
      score: 0,
      claimed_success: true,
    });
    expect((await sut.regradeSources(runId, taskId))[0]).toMatchObject({
      attempt: 2,
      original: { grade_no: 1 },
    });
    expect(await sut.regradeSources(runId, 'no-such-task')).toEqual([]);
  });

  it("says which grader graded, keeps both graders' scores, and counts where they disagree", async () => {
    const sut = new OsworldGradesRepository(services.db);
    const { runId, taskIds } = await startRun(services.db, ['chrome', 'os', 'os']);
    const [upstreamOnly, agreed, disagreed] = taskIds as [string, string, string];
    const upstream = (score: number) =>
      grade(score, 'COMPLETED', { grader: 'upstream', metricVersion: 'osworld-upstream/f6cee71' });
    const key = (taskId: string) => ({ runId, taskId, attempt: 1 });
    expect(await sut.recordAttemptGrade(key(upstreamOnly), upstream(1), null)).toBe(true);
    expect(await sut.recordAttemptGrade(key(agreed), upstream(1), null)).toBe(true);
    expect(
      await sut.recordGraderComparison(key(agreed), { port: grade(1), upstream: upstream(1) }),
    ).toBe(true);
    expect(await sut.recordAttemptGrade(key(disagreed), upstream(0), null)).toBe(true);
    expect(
      await sut.recordGraderComparison(key(disagreed), { port: grade(1), upstream: upstream(0) }),
    ).toBe(true);
    // Once per attempt.
    expect(
      await sut.recordGraderComparison(key(disagreed), { port: grade(0), upstream: upstream(0) }),
    ).toBe(false);
    for (const taskId of taskIds) await settle(services.db, runId, taskId, 1, 'COMPLETED');
    // A settled attempt takes no late comparison.
    const late = await startRun(services.db, ['os']);
    await settle(services.db, late.runId, late.taskIds[0]!, 1, 'COMPLETED');
    expect(
      await sut.recordGraderComparison(
        { runId: late.runId, taskId: late.taskIds[0]!, attempt: 1 },
        { port: grade(1), upstream: upstream(1) },
      ),
    ).toBe(false);

    expect((await sut.gradesOfTask(runId, upstreamOnly))[0]).toMatchObject({
      grader: 'upstream',
      metric_version: 'osworld-upstream/f6cee71',
    });
    expect(
      (await sut.taskGrades(runId)).map((row) => [row.task_id, row.grader, row.graders_agree]),
    ).toEqual([
      [upstreamOnly, 'upstream', null],
      [agreed, 'upstream', true],
      [disagreed, 'upstream', false],
    ]);
    expect(await sut.runGrading(runId)).toMatchObject({
      scored: 3,
      upstream_graded: 3,
      grader_disagreements: 1,
    });
    const comparison = await sql<{ port_score: number; upstream_score: number; agree: boolean }>`
      select port_score, upstream_score, agree from osworld_grader_comparisons
      where run_id = ${runId} and task_id = ${disagreed}
    `.execute(services.db);
    expect(comparison.rows).toEqual([{ port_score: 1, upstream_score: 0, agree: false }]);
    // A grade written without a grader is the port's (as every grade before the grader image).
    const old = await startRun(services.db, ['os']);
    await sut.recordAttemptGrade(
      { runId: old.runId, taskId: old.taskIds[0]!, attempt: 1 },
      grade(1),
      null,
    );
    expect((await sut.gradesOfTask(old.runId, old.taskIds[0]!))[0]?.grader).toBe('port');
  });
});
