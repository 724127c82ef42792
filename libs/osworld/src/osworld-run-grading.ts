import {
  attemptGradeKey,
  type BenchmarkGrading,
  type GradedSummary,
  type GradeRecord,
} from '@benchfleet/benchmark-kit';
import type { Database, Run } from '@benchfleet/db';
import {
  OsworldGradesRepository,
  type OsworldGradeRow,
  type OsworldTaskGradeRow,
} from './osworld-grades-repository.js';

// Graded OSWorld in the fleet's shared outputs: the summary's `graded` block, each task's grade
// for compare and the osworld-logs export, each attempt's grade for ATIF. All from the grade views.

const OSWORLD_GRADE_LABEL =
  "graded score: OSWorld's evaluate() of the desktop's end state (0–1), beside the agent's word";

/** A run is graded when it was enqueued with --grade, or has grades (written by hand or a regrade). */
function isGradedConfig(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    (config as Record<string, unknown>)['grade'] === true
  );
}

function gradedWithBoth(config: unknown): boolean {
  return (
    typeof config === 'object' &&
    config !== null &&
    (config as Record<string, unknown>)['grader'] === 'both'
  );
}

export async function osworldGradedSummary(db: Database, run: Run): Promise<GradedSummary | null> {
  const repository = new OsworldGradesRepository(db);
  const row = await repository.runGrading(run.id);
  if (!row || (row.graded === 0 && !isGradedConfig(run.config))) return null;
  const domains = await repository.domainGrading(run.id);
  return {
    label: OSWORLD_GRADE_LABEL,
    metric_versions: await repository.gradedDistinct(run.id, 'metric_version'),
    final_signal_mappings: await repository.gradedDistinct(run.id, 'final_signal_mapping'),
    tasks: row.tasks,
    graded: row.graded,
    scored: row.scored,
    no_score: row.no_score,
    fidelity: {
      graded: row.graded - row.degraded - row.ungraded,
      degraded: row.degraded,
      ungraded: row.ungraded,
    },
    mean_score: row.mean_score,
    graded_success_rate: row.graded_success_rate,
    claimed_success_rate: row.claimed_success_rate,
    claimed_vs_graded: {
      claimed_and_passed: row.claimed_and_passed,
      claimed_but_failed: row.claimed_but_failed,
      unclaimed_but_passed: row.unclaimed_but_passed,
      unclaimed_and_failed: row.unclaimed_and_failed,
    },
    // Shown where both graders ran (`--grader both`), or where they disagreed.
    ...(row.grader_disagreements > 0 || gradedWithBoth(run.config)
      ? { grader_disagreements: row.grader_disagreements }
      : {}),
    per_domain: Object.fromEntries(
      domains.map((domain) => [
        domain.domain,
        {
          tasks: domain.tasks,
          scored: domain.scored,
          no_score: domain.no_score,
          mean_score: domain.mean_score,
          graded_success_rate: domain.graded_success_rate,
          claimed_success_rate: domain.claimed_success_rate,
        },
      ]),
    ),
  };
}

type GradeFields = Pick<
  OsworldGradeRow,
  | 'grade_no'
  | 'regraded_from'
  | 'metric_version'
  | 'final_signal'
  | 'final_signal_mapping'
  | 'fidelity'
  | 'fidelity_reason'
  | 'substitutions'
  | 'score'
  | 'python_type'
  | 'no_score_cause'
  | 'reason'
  | 'graded_at'
  | 'end_state'
>;

/** A grade as the exports write it: the score and its type, fidelity, why there is no score, the end state kept. */
function gradeRecordOf(row: GradeFields): Record<string, unknown> {
  return {
    score: row.score,
    python_type: row.python_type,
    success: row.score === null ? null : row.score === 1,
    fidelity: row.fidelity,
    fidelity_reason: row.fidelity_reason,
    substitutions: row.substitutions,
    no_score_cause: row.no_score_cause,
    reason: row.reason,
    metric_version: row.metric_version,
    final_signal: row.final_signal,
    final_signal_mapping: row.final_signal_mapping,
    grade_no: row.grade_no,
    regraded_from: row.regraded_from,
    graded_at: row.graded_at.toISOString(),
    end_state: row.end_state,
  };
}

function gradeOf(row: GradeFields, extra: Record<string, unknown> = {}): GradeRecord {
  return {
    score: row.score,
    success: row.score === null ? null : row.score === 1,
    record: { ...gradeRecordOf(row), ...extra },
  };
}

/** Each task's latest grade of its outcome attempt (tasks without a grade are absent). */
export async function osworldTaskGrades(
  db: Database,
  runId: string,
): Promise<ReadonlyMap<string, GradeRecord>> {
  const rows = await new OsworldGradesRepository(db).taskGrades(runId);
  return new Map(
    rows
      .filter(
        (row): row is OsworldTaskGradeRow & GradeFields & { grade_no: number } =>
          row.grade_no !== null,
      )
      .map((row) => [row.task_id, gradeOf(row)]),
  );
}

/** Every graded attempt's latest grade, with the metric's inputs and verdict (`details`). */
export async function osworldAttemptGrades(
  db: Database,
  runId: string,
): Promise<ReadonlyMap<string, GradeRecord>> {
  const rows = await new OsworldGradesRepository(db).latestAttemptGrades(runId);
  return new Map(
    rows.map((row) => [
      attemptGradeKey(row.task_id, row.attempt),
      gradeOf(row, { details: row.details }),
    ]),
  );
}

export const osworldGrading: BenchmarkGrading = {
  summarize: osworldGradedSummary,
  taskGrades: osworldTaskGrades,
  attemptGrades: osworldAttemptGrades,
};
