import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// Graded OSWorld: one row per grading of an attempt's end state. The worker writes grade 1 of the
// attempt it ran; `regrade` adds grade 2, 3, … of the same attempt (scored again from the saved
// end state with a newer port), so nothing is overwritten and the latest row is "the grade". The
// grade of a task is the latest grade of the attempt whose outcome the task row holds
// (tasks.attempts), so the agent's word and the grade always come from the same trajectory.
// These tables belong to the OSWorld benchmark: its descriptor contributes this migration.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table osworld_grades (
      run_id text not null,
      task_id text not null,
      attempt integer not null,
      grade_no integer not null check (grade_no >= 1),
      -- null for the attempt's own grade; for a regrade, the grade it was scored again from
      regraded_from integer,
      metric_version text not null,
      -- the last action evaluate() saw ('FAIL', 'DONE', or none) and the Bytebot status it came from
      final_signal text check (final_signal in ('FAIL', 'DONE')),
      bytebot_status text not null,
      final_signal_mapping text not null,
      fidelity text not null check (fidelity in ('graded', 'degraded', 'ungraded')),
      fidelity_reason text,
      substitutions text[] not null default '{}',
      score double precision,
      python_type text check (python_type in ('float', 'int', 'bool')),
      no_score_cause text,
      reason text,
      details jsonb not null,
      end_state jsonb not null default '[]'::jsonb,
      -- the attempt's own grade: what the reset and the setup did (exit, output tails, each step,
      -- each download with its sha256) and the phases' durations; null for a regrade
      setup jsonb,
      graded_at timestamptz not null default now(),
      constraint osworld_grades_pk primary key (run_id, task_id, attempt, grade_no),
      constraint osworld_grades_attempt_fk foreign key (run_id, task_id, attempt)
        references attempts (run_id, task_id, attempt) on delete cascade,
      constraint osworld_grades_score_or_cause check ((score is null) = (no_score_cause is not null)),
      constraint osworld_grades_score_type check ((score is null) = (python_type is null)),
      constraint osworld_grades_regrade check ((grade_no = 1) = (regraded_from is null))
    )
  `.execute(db);

  // Per task: the agent's word next to the latest grade of the attempt the task's outcome is from.
  await sql`
    create view osworld_task_grades as
    select
      t.run_id,
      t.task_id,
      t.domain,
      t.status,
      t.final_api_status,
      t.success as claimed_success,
      t.attempts as attempt,
      g.grade_no,
      g.regraded_from,
      g.metric_version,
      g.final_signal,
      g.final_signal_mapping,
      g.fidelity,
      g.fidelity_reason,
      g.substitutions,
      g.score,
      g.python_type,
      g.no_score_cause,
      g.reason,
      g.score = 1 as graded_success,
      g.graded_at,
      g.end_state
    from tasks t
    join runs r on r.id = t.run_id and r.benchmark = 'osworld'
    left join lateral (
      select * from osworld_grades og
      where og.run_id = t.run_id and og.task_id = t.task_id and og.attempt = t.attempts
      order by og.grade_no desc
      limit 1
    ) g on true
  `.execute(db);
  await sql`
    comment on view osworld_task_grades is
    'Per OSWorld task: the agent''s word (claimed_success = Bytebot said COMPLETED) and the latest grade of the same attempt. graded_success = (score = 1); null without a score.'
  `.execute(db);

  // Per run: claimed success × graded success over the settled tasks with a score.
  await sql`
    create view osworld_run_grading as
    select
      r.id as run_id,
      r.name,
      count(tg.task_id)::int as tasks,
      count(tg.grade_no)::int as graded,
      count(tg.score)::int as scored,
      count(*) filter (where tg.grade_no is not null and tg.score is null)::int as no_score,
      count(*) filter (where tg.fidelity = 'degraded')::int as degraded,
      count(*) filter (where tg.fidelity = 'ungraded')::int as ungraded,
      count(*) filter (where tg.claimed_success and tg.score = 1)::int as claimed_and_passed,
      count(*) filter (where tg.claimed_success and tg.score < 1)::int as claimed_but_failed,
      count(*) filter (where not tg.claimed_success and tg.score = 1)::int as unclaimed_but_passed,
      count(*) filter (where not tg.claimed_success and tg.score < 1)::int as unclaimed_and_failed,
      round(avg(tg.claimed_success::int) filter (where tg.score is not null and tg.claimed_success is not null)::numeric, 4)::float8 as claimed_success_rate,
      round(avg((tg.score = 1)::int) filter (where tg.score is not null and tg.claimed_success is not null)::numeric, 4)::float8 as graded_success_rate,
      round(avg(tg.score)::numeric, 4)::float8 as mean_score
    from runs r
    left join osworld_task_grades tg on tg.run_id = r.id
    where r.benchmark = 'osworld'
    group by r.id
  `.execute(db);
  await sql`
    comment on view osworld_run_grading is
    'Per OSWorld run: claimed success (Bytebot said COMPLETED) against graded success (score = 1) over the settled tasks that have a score; claimed_but_failed are the agent''s false claims. mean_score is OSWorld''s number: the mean score of the tasks with a score; no_score counts the others.'
  `.execute(db);

  // Per run and domain: the graded means.
  await sql`
    create view osworld_domain_grading as
    select
      tg.run_id,
      tg.domain,
      count(*)::int as tasks,
      count(tg.score)::int as scored,
      count(*) filter (where tg.grade_no is not null and tg.score is null)::int as no_score,
      round(avg(tg.score)::numeric, 4)::float8 as mean_score,
      round(avg((tg.score = 1)::int) filter (where tg.score is not null and tg.claimed_success is not null)::numeric, 4)::float8 as graded_success_rate,
      round(avg(tg.claimed_success::int) filter (where tg.score is not null and tg.claimed_success is not null)::numeric, 4)::float8 as claimed_success_rate
    from osworld_task_grades tg
    group by tg.run_id, tg.domain
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view if exists osworld_domain_grading`.execute(db);
  await sql`drop view if exists osworld_run_grading`.execute(db);
  await sql`drop view if exists osworld_task_grades`.execute(db);
  await sql`drop table if exists osworld_grades`.execute(db);
}
