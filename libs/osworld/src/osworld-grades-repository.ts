import { sql, type Kysely } from 'kysely';
import { prepared, type Database, type DB } from '@benchfleet/db';
import {
  gradersAgree,
  type OsworldGrade,
  type OsworldGraderComparison,
  type OsworldSetupRecord,
} from './osworld-grade.js';
import type { OsworldTables } from './osworld-tables.js';

/** Which attempt a grade is of. */
export interface GradedAttemptKey {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
}

/** A row of `osworld_grades`. */
export interface OsworldGradeRow {
  run_id: string;
  task_id: string;
  attempt: number;
  grade_no: number;
  regraded_from: number | null;
  metric_version: string;
  final_signal: 'FAIL' | 'DONE' | null;
  bytebot_status: string;
  final_signal_mapping: string;
  fidelity: 'graded' | 'degraded' | 'ungraded';
  fidelity_reason: string | null;
  substitutions: string[];
  score: number | null;
  python_type: 'float' | 'int' | 'bool' | null;
  no_score_cause: string | null;
  reason: string | null;
  /** GradeDetails as recorded. */
  details: unknown;
  /** OsworldEndStateArtifact[] as recorded. */
  end_state: unknown;
  /** OsworldSetupRecord of the attempt's own grade; null for a regrade. */
  setup: unknown;
  graded_at: Date;
  grader: 'port' | 'upstream';
}

/** A row of the `osworld_task_grades` view: the agent's word and the latest grade of its attempt. */
export interface OsworldTaskGradeRow {
  run_id: string;
  task_id: string;
  domain: string;
  status: string;
  final_api_status: string | null;
  claimed_success: boolean | null;
  attempt: number;
  grade_no: number | null;
  regraded_from: number | null;
  metric_version: string | null;
  final_signal: 'FAIL' | 'DONE' | null;
  final_signal_mapping: string | null;
  fidelity: 'graded' | 'degraded' | 'ungraded' | null;
  fidelity_reason: string | null;
  substitutions: string[] | null;
  score: number | null;
  python_type: 'float' | 'int' | 'bool' | null;
  no_score_cause: string | null;
  reason: string | null;
  graded_success: boolean | null;
  graded_at: Date | null;
  end_state: unknown;
  grader: 'port' | 'upstream' | null;
  graders_agree: boolean | null;
}

/** A row of `osworld_run_grading`: claimed success × graded success (score = 1) for one run. */
export interface OsworldRunGradingRow {
  run_id: string;
  name: string;
  tasks: number;
  graded: number;
  scored: number;
  no_score: number;
  degraded: number;
  ungraded: number;
  claimed_and_passed: number;
  claimed_but_failed: number;
  unclaimed_but_passed: number;
  unclaimed_and_failed: number;
  claimed_success_rate: number | null;
  graded_success_rate: number | null;
  mean_score: number | null;
  upstream_graded: number;
  grader_disagreements: number;
}

/** A row of `osworld_domain_grading`. */
export interface OsworldDomainGradingRow {
  run_id: string;
  domain: string;
  tasks: number;
  scored: number;
  no_score: number;
  mean_score: number | null;
  graded_success_rate: number | null;
  claimed_success_rate: number | null;
}

/** What `regrade` starts from: a task's spec and the attempt's own grade (null: never graded). */
export interface RegradeSourceRow {
  task_id: string;
  domain: string;
  spec: unknown;
  attempt: number;
  /** The attempt's own grade (grade 1): its details hold the trace a regrade replays. */
  original: Pick<
    OsworldGradeRow,
    | 'grade_no'
    | 'metric_version'
    | 'no_score_cause'
    | 'details'
    | 'end_state'
    | 'fidelity'
    | 'substitutions'
    | 'grader'
  > | null;
  /** The metric version of the attempt's latest grade. */
  latest_metric_version: string | null;
}

export type RegradeWrite =
  | { readonly recorded: true; readonly gradeNo: number }
  /** The latest grade already has this metric version (or a concurrent regrade wrote it). */
  | { readonly recorded: false };

/**
 * The statements of the `osworld_grades` table and its views. Writes are conditional: the grade of
 * an attempt is written once, only while that attempt runs; a regrade adds a row after the latest.
 */
export class OsworldGradesRepository {
  private readonly db: Kysely<DB & OsworldTables>;

  constructor(db: Database) {
    this.db = db.withTables<OsworldTables>();
  }

  /**
   * Writes an attempt's own grade (grade 1) if that attempt is still running, as its steps are:
   * call it before settling the attempt. False when nothing was written: the grade was already
   * there (a second write changes nothing), or the attempt is no longer running (closed as lost,
   * the run cancelled).
   */
  async recordAttemptGrade(
    key: GradedAttemptKey,
    grade: OsworldGrade,
    setup: OsworldSetupRecord | null,
  ): Promise<boolean> {
    const result = await sql<{
      grade_no: number;
    }>`${prepared}${recordAttemptGradeStatement(key, grade, setup)}`.execute(this.db);
    return result.rows.length === 1;
  }

  /**
   * Records both graders' scores of an attempt (`--grader both`) and whether they agree, only while
   * the attempt runs, at most once. False when nothing was written.
   */
  async recordGraderComparison(
    key: GradedAttemptKey,
    comparison: OsworldGraderComparison,
  ): Promise<boolean> {
    const result =
      await sql`${prepared}${recordGraderComparisonStatement(key, comparison)}`.execute(this.db);
    return result.rows.length === 1;
  }

  /**
   * Adds a regrade of an attempt after its latest grade, scored again from grade `regradedFrom`.
   * Nothing is written when the latest grade already has this metric version (unless `force`), or
   * when grade `regradedFrom` does not exist.
   */
  async recordRegrade(
    key: GradedAttemptKey,
    grade: OsworldGrade,
    options: { regradedFrom: number; force?: boolean },
  ): Promise<RegradeWrite> {
    const result = await sql<{ grade_no: number }>`${recordRegradeStatement(
      key,
      grade,
      options.regradedFrom,
      options.force ?? false,
    )}`.execute(this.db);
    const row = result.rows[0];
    return row ? { recorded: true, gradeNo: row.grade_no } : { recorded: false };
  }

  /** Every grade of a task, oldest first (all attempts): its grading history. */
  async gradesOfTask(runId: string, taskId: string): Promise<OsworldGradeRow[]> {
    const result = await sql<OsworldGradeRow>`
      select * from osworld_grades
      where run_id = ${runId} and task_id = ${taskId}
      order by attempt, grade_no
    `.execute(this.db);
    return result.rows;
  }

  /** Each task of a run (or one task), in run order, with the attempt's own grade to regrade from. */
  async regradeSources(runId: string, taskId?: string): Promise<RegradeSourceRow[]> {
    const result = await sql<
      Omit<RegradeSourceRow, 'original'> & {
        original_grade_no: number | null;
        original_metric_version: string | null;
        original_no_score_cause: string | null;
        original_details: unknown;
        original_end_state: unknown;
        original_fidelity: OsworldGradeRow['fidelity'];
        original_substitutions: string[];
        original_grader: OsworldGradeRow['grader'];
      }
    >`
      select t.task_id, t.domain, t.spec, t.attempts as attempt,
             g.grade_no as original_grade_no, g.metric_version as original_metric_version,
             g.no_score_cause as original_no_score_cause, g.details as original_details,
             g.end_state as original_end_state, g.fidelity as original_fidelity,
             g.substitutions as original_substitutions, g.grader as original_grader,
             (select l.metric_version from osworld_grades l
              where l.run_id = t.run_id and l.task_id = t.task_id and l.attempt = t.attempts
              order by l.grade_no desc limit 1) as latest_metric_version
      from tasks t
      left join osworld_grades g
        on g.run_id = t.run_id and g.task_id = t.task_id and g.attempt = t.attempts and g.grade_no = 1
      where t.run_id = ${runId} and (${taskId ?? null}::text is null or t.task_id = ${taskId ?? null})
      order by t.seq
    `.execute(this.db);
    return result.rows.map((row) => ({
      task_id: row.task_id,
      domain: row.domain,
      spec: row.spec,
      attempt: row.attempt,
      original:
        row.original_grade_no === null
          ? null
          : {
              grade_no: row.original_grade_no,
              metric_version: row.original_metric_version ?? '',
              no_score_cause: row.original_no_score_cause,
              details: row.original_details,
              end_state: row.original_end_state,
              fidelity: row.original_fidelity,
              substitutions: row.original_substitutions,
              grader: row.original_grader,
            },
      latest_metric_version: row.latest_metric_version,
    }));
  }

  /** `osworld_task_grades` of a run, in run order. */
  async taskGrades(runId: string): Promise<OsworldTaskGradeRow[]> {
    const result = await sql<OsworldTaskGradeRow>`
      select tg.* from osworld_task_grades tg
      join tasks t on t.run_id = tg.run_id and t.task_id = tg.task_id
      where tg.run_id = ${runId}
      order by t.seq
    `.execute(this.db);
    return result.rows;
  }

  /** `osworld_run_grading` of a run; undefined for a run that is not an OSWorld run. */
  async runGrading(runId: string): Promise<OsworldRunGradingRow | undefined> {
    const result = await sql<OsworldRunGradingRow>`
      select * from osworld_run_grading where run_id = ${runId}
    `.execute(this.db);
    return result.rows[0];
  }

  /** The latest grade of every graded attempt of a run (by task and attempt). */
  async latestAttemptGrades(runId: string): Promise<OsworldGradeRow[]> {
    const result = await sql<OsworldGradeRow>`
      select distinct on (task_id, attempt) * from osworld_grades
      where run_id = ${runId}
      order by task_id, attempt, grade_no desc
    `.execute(this.db);
    return result.rows;
  }

  /** The distinct values of a grade's `column` over a run's graded tasks, in order. */
  async gradedDistinct(
    runId: string,
    column: 'metric_version' | 'final_signal_mapping',
  ): Promise<string[]> {
    const result = await sql<{ value: string }>`
      select distinct ${sql.ref(column)} as value from osworld_task_grades
      where run_id = ${runId} and grade_no is not null
      order by 1
    `.execute(this.db);
    return result.rows.map((row) => row.value);
  }

  /** `osworld_domain_grading` of a run, by domain. */
  async domainGrading(runId: string): Promise<OsworldDomainGradingRow[]> {
    const result = await sql<OsworldDomainGradingRow>`
      select * from osworld_domain_grading where run_id = ${runId} order by domain
    `.execute(this.db);
    return result.rows;
  }
}

/** The columns every grade row takes from an OsworldGrade, in `gradeColumns` order. */
function gradeValues(grade: OsworldGrade) {
  const fidelity = grade.fidelity;
  return sql.join([
    sql`${grade.metricVersion}::text`,
    sql`${grade.finalSignal.action}::text`,
    sql`${grade.finalSignal.bytebotStatus}::text`,
    sql`${grade.finalSignalMapping}::text`,
    sql`${fidelity.level}::text`,
    sql`${fidelity.level === 'ungraded' ? fidelity.reason : null}::text`,
    sql`${fidelity.level === 'degraded' ? [...fidelity.substitutions] : []}::text[]`,
    sql`${grade.score}::float8`,
    sql`${grade.pythonType}::text`,
    sql`${grade.noScoreCause}::text`,
    sql`${grade.reason}::text`,
    sql`${JSON.stringify(grade.details)}::jsonb`,
    sql`${JSON.stringify(grade.endState)}::jsonb`,
    sql`${grade.grader ?? 'port'}::text`,
  ]);
}

const gradeColumns = sql.raw(
  'metric_version, final_signal, bytebot_status, final_signal_mapping, fidelity, fidelity_reason, substitutions, score, python_type, no_score_cause, reason, details, end_state, grader',
);

/**
 * `insert … grade 1` of an attempt, only while the attempt is running (a lost or cancelled
 * attempt's late grade is not written), and at most once (the key).
 */
export function recordAttemptGradeStatement(
  key: GradedAttemptKey,
  grade: OsworldGrade,
  setup: OsworldSetupRecord | null,
) {
  return sql`
    insert into osworld_grades (run_id, task_id, attempt, grade_no, regraded_from, ${gradeColumns}, setup)
    select ${key.runId}::text, ${key.taskId}::text, ${key.attempt}::int, 1, null, ${gradeValues(grade)},
           ${setup === null ? null : JSON.stringify(setup)}::jsonb
    where exists (
      select 1 from attempts a
      where a.run_id = ${key.runId}::text and a.task_id = ${key.taskId}::text and a.attempt = ${key.attempt}::int
        and a.status = 'running'
    )
    on conflict (run_id, task_id, attempt, grade_no) do nothing
    returning grade_no
  `;
}

/**
 * `insert …` a regrade after the attempt's latest grade, if grade `regradedFrom` exists and the
 * latest grade's metric version differs (or `force`). Two concurrent regrades of one attempt
 * compute the same number: the key lets one in, the other writes nothing.
 */
export function recordRegradeStatement(
  key: GradedAttemptKey,
  grade: OsworldGrade,
  regradedFrom: number,
  force: boolean,
) {
  return sql`
    with latest as (
      select g.grade_no, g.metric_version from osworld_grades g
      where g.run_id = ${key.runId}::text and g.task_id = ${key.taskId}::text and g.attempt = ${key.attempt}::int
      order by g.grade_no desc
      limit 1
    )
    insert into osworld_grades (run_id, task_id, attempt, grade_no, regraded_from, ${gradeColumns})
    select ${key.runId}::text, ${key.taskId}::text, ${key.attempt}::int, latest.grade_no + 1, ${regradedFrom}::int, ${gradeValues(grade)}
    from latest
    where exists (
      select 1 from osworld_grades o
      where o.run_id = ${key.runId}::text and o.task_id = ${key.taskId}::text and o.attempt = ${key.attempt}::int
        and o.grade_no = ${regradedFrom}::int
    )
      and (${force}::bool or latest.metric_version <> ${grade.metricVersion}::text)
    on conflict (run_id, task_id, attempt, grade_no) do nothing
    returning grade_no
  `;
}

/**
 * `insert …` both graders' scores of an attempt, only while the attempt is running and at most
 * once (the key), as the attempt's own grade is.
 */
export function recordGraderComparisonStatement(
  key: GradedAttemptKey,
  comparison: OsworldGraderComparison,
) {
  const { port, upstream } = comparison;
  const details = {
    port: { metricVersion: port.metricVersion, reason: port.reason, fidelity: port.fidelity.level },
    upstream: {
      metricVersion: upstream.metricVersion,
      reason: upstream.reason,
      fidelity: upstream.fidelity.level,
    },
  };
  return sql`
    insert into osworld_grader_comparisons (run_id, task_id, attempt, port_score, port_no_score_cause,
      upstream_score, upstream_no_score_cause, agree, details)
    select ${key.runId}::text, ${key.taskId}::text, ${key.attempt}::int, ${port.score}::float8,
           ${port.noScoreCause}::text, ${upstream.score}::float8, ${upstream.noScoreCause}::text,
           ${gradersAgree(comparison)}::bool, ${JSON.stringify(details)}::jsonb
    where exists (
      select 1 from attempts a
      where a.run_id = ${key.runId}::text and a.task_id = ${key.taskId}::text and a.attempt = ${key.attempt}::int
        and a.status = 'running'
    )
    on conflict (run_id, task_id, attempt) do nothing
    returning attempt
  `;
}
