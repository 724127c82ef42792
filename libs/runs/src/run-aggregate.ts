// A run's aggregate: its summary computed from its rows (the numbers of the original final.json,
// cost, the benchmark's own scores), stored in runs.summary, asked of the fleet keeper, or printed.
import { isSettledTaskStatus, roundLikePython } from '@benchfleet/core';
import {
  computeRunNumbers,
  type BenchmarkRegistry,
  type GradedSummary,
  type RunSummary,
} from '@benchfleet/benchmark-kit';
import { RunsRepository, TasksRepository, type Database, type Task } from '@benchfleet/db';
import { aggregateJobId, aggregateRunJob, type JobProducer } from '@benchfleet/queue';
import { readRunLimits } from './run-limits.js';
import { epochSummary, epochSummaryMarkdown } from './task-epochs.js';

function durationSeconds(task: Task): number {
  return roundLikePython((task.duration_ms ?? 0) / 1000, 1);
}

/** The run's summary from its Postgres rows only, so retries and resumes cannot skew it. */
export async function computeRunSummary(
  db: Database,
  registry: BenchmarkRegistry,
  runId: string,
): Promise<RunSummary> {
  const run = await new RunsRepository(db).get(runId);
  if (!run) throw new Error(`run ${runId} not found`);
  const benchmark = registry.get(run.benchmark);
  const tasks = await new TasksRepository(db).listByRun(runId);
  const settled = tasks.filter((task) => isSettledTaskStatus(task.status));
  const numbers = computeRunNumbers(
    settled.map((task) => ({
      task_id: task.task_id,
      domain: task.domain,
      status: task.status,
      total_steps: task.total_steps,
      duration_seconds: durationSeconds(task),
    })),
  );
  const spend = runSpend(tasks, settled, readRunLimits(run.limits).max_cost_usd ?? null);
  const graded = (await benchmark.grading?.summarize(db, run)) ?? null;
  return {
    run_id: runId,
    benchmark: run.benchmark,
    success_label: benchmark.success.label,
    ...numbers,
    pending: tasks.length - settled.length,
    tokens_in: spend.tokens_in,
    tokens_out: spend.tokens_out,
    cost_usd: spend.cost_usd,
    cost_per_success_usd: spend.cost_per_success_usd,
    scores:
      benchmark.scores?.(
        settled.map((task) => ({
          ...task,
          // Read through the benchmark's own schema; a result it refuses (an older build's) counts as none.
          result: benchmark.taskResult.safeParse(task.result).data ?? null,
        })),
      ) ?? null,
    ...runTimeSpan(tasks, settled),
    ...agentNumbers(settled),
    cost_limit_usd: spend.cost_limit_usd,
    cost_overshoot_usd: spend.cost_overshoot_usd,
    unpriced: spend.unpriced,
    // Last, and only for a graded run: an ungraded run's summary is what it always was.
    ...(graded ? { graded } : {}),
    // Only for a run of several epochs, for the same reason.
    ...(run.epochs > 1 ? { epochs: epochSummary(run.epochs, tasks) } : {}),
  };
}

/** What the run spent, against its limit. */
function runSpend(tasks: Task[], settled: Task[], limitUsd: number | null) {
  // One settled task of unknown cost makes the run's cost unknown: a partial sum would mislead.
  const costKnown = settled.every((task) => task.cost_usd !== null);
  const cost = settled.reduce((sum, task) => sum + (task.cost_usd ?? 0), 0);
  const successes = settled.filter((task) => task.status === 'success').length;
  return {
    tokens_in: tasks.reduce((sum, task) => sum + Number(task.tokens_in), 0),
    tokens_out: tasks.reduce((sum, task) => sum + Number(task.tokens_out), 0),
    cost_usd: costKnown ? roundLikePython(cost, 6) : null,
    cost_per_success_usd: costKnown && successes ? roundLikePython(cost / successes, 6) : null,
    cost_limit_usd: limitUsd,
    cost_overshoot_usd:
      limitUsd === null || !costKnown ? null : roundLikePython(Math.max(0, cost - limitUsd), 6),
    unpriced: !costKnown,
  };
}

/** From the first task's start to the last settled task's end. */
function runTimeSpan(tasks: Task[], settled: Task[]) {
  const starts = tasks
    .map((task) => task.started_at?.getTime())
    .filter((t): t is number => t !== undefined);
  const ends = settled
    .map((task) => task.finished_at?.getTime())
    .filter((t): t is number => t !== undefined);
  const startedAt = starts.length ? new Date(Math.min(...starts)) : null;
  const finishedAt = ends.length ? new Date(Math.max(...ends)) : null;
  return {
    started_at: startedAt?.toISOString() ?? null,
    finished_at: finishedAt?.toISOString() ?? null,
    total_duration_seconds:
      startedAt && finishedAt
        ? roundLikePython((finishedAt.getTime() - startedAt.getTime()) / 1000, 1)
        : null,
  };
}

/** The agent's success rate without the tasks that were not the agent's (infra faults, budget stops), and those. */
function agentNumbers(settled: Task[]) {
  const notTheAgents = (task: Task) =>
    task.status === 'error' && (task.error_class === 'infra' || task.error_class === 'budget');
  const scored = settled.filter((task) => !notTheAgents(task));
  return {
    success_rate_excluding_infra:
      scored.length === 0
        ? null
        : roundLikePython(
            scored.filter((task) => task.status === 'success').length / scored.length,
            4,
          ),
    infra_failed: settled.filter((task) => task.status === 'error' && task.error_class === 'infra')
      .length,
    budget_stopped: settled.filter(
      (task) => task.status === 'error' && task.error_class === 'budget',
    ).length,
  };
}

/** Computes and stores the summary; the run counts as finished once nothing is pending. */
export async function aggregateRun(
  db: Database,
  registry: BenchmarkRegistry,
  runId: string,
): Promise<RunSummary> {
  const summary = await computeRunSummary(db, registry, runId);
  await new RunsRepository(db).saveSummary(
    runId,
    summary,
    summary.pending === 0 && summary.finished_at ? new Date(summary.finished_at) : null,
  );
  return summary;
}

/**
 * Asks the fleet keeper for a run's summary: one aggregate job per run at a time (its job id is
 * the run's), so asking twice while one waits asks once.
 */
export async function requestRunAggregate(producer: JobProducer, runId: string): Promise<void> {
  await producer.enqueue(aggregateRunJob, { payload: { runId }, jobId: aggregateJobId(runId) });
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** A Markdown report of the summary, for `scheduler aggregate --markdown` and the demo. */
export function summaryMarkdown(summary: RunSummary, runName: string): string {
  const s = summary.summary;
  const lines = [
    `# ${runName} (${summary.benchmark})`,
    '',
    `Run \`${summary.run_id}\`: ${s.total_tasks} tasks settled, ${summary.pending} pending. Success here means: ${summary.success_label}.`,
    '',
    `| total | ${summary.success_label} | failed | cancelled | errors | success rate | avg steps | avg duration (s) |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${s.total_tasks} | ${s.succeeded} | ${s.failed} | ${s.cancelled} | ${s.errors} | ${percent(s.success_rate)} | ${s.avg_steps} | ${s.avg_duration_seconds} |`,
    '',
  ];
  if (summary.scores) {
    const names = Object.keys(summary.scores);
    lines.push(`| ${names.join(' | ')} |`, `|${names.map(() => '---:').join('|')}|`);
    lines.push(`| ${names.map((name) => String(summary.scores?.[name])).join(' | ')} |`, '');
  }
  lines.push(
    '| domain | total | success | success rate | avg steps |',
    '|---|---:|---:|---:|---:|',
  );
  for (const [domain, d] of Object.entries(summary.per_domain).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    lines.push(
      `| ${domain} | ${d.total} | ${d.succeeded} | ${percent(d.success_rate)} | ${d.avg_steps} |`,
    );
  }
  if (summary.graded) lines.push('', ...gradedMarkdown(summary.graded, summary.success_label));
  if (summary.epochs) lines.push('', ...epochSummaryMarkdown(summary.epochs));
  const cost =
    summary.cost_usd === null
      ? 'unpriced (a model has no price: unknown, not $0)'
      : `$${summary.cost_usd}`;
  const limit =
    summary.cost_limit_usd === null || summary.cost_limit_usd === undefined
      ? ''
      : ` of a $${summary.cost_limit_usd} limit${summary.cost_overshoot_usd ? `, over by $${summary.cost_overshoot_usd}` : ''}`;
  lines.push(
    '',
    `Tokens: ${summary.tokens_in} in, ${summary.tokens_out} out; cost ${cost}${limit}.`,
  );
  if (summary.success_rate_excluding_infra !== undefined)
    lines.push(
      `Scores: ${percent(s.success_rate)} with infra failures counted as failures; ` +
        `${summary.success_rate_excluding_infra === null ? 'n/a' : percent(summary.success_rate_excluding_infra)} with them excluded ` +
        `(${summary.infra_failed ?? 0} infra-failed, ${summary.budget_stopped ?? 0} stopped by a spend limit).`,
    );
  lines.push('');
  return lines.join('\n');
}

const rateText = (rate: number | null) => (rate === null ? 'n/a' : percent(rate));

/** A graded run's grade beside the agent's word: the numbers, the claimed × graded table, per domain. */
function gradedMarkdown(graded: GradedSummary, successLabel: string): string[] {
  const t = graded.claimed_vs_graded;
  const lines = [
    `## Graded (${graded.metric_versions.join(', ') || 'no grade yet'})`,
    '',
    `${graded.label}.`,
    '',
    `| mean score | graded success rate | ${successLabel} rate | scored | no score | graded | degraded | ungraded |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${graded.mean_score ?? 'n/a'} | ${rateText(graded.graded_success_rate)} | ${rateText(graded.claimed_success_rate)} | ${graded.scored} | ${graded.no_score} | ${graded.fidelity.graded} | ${graded.fidelity.degraded} | ${graded.fidelity.ungraded} |`,
    '',
    '| claimed \\ graded | passed (score 1) | failed |',
    '|---|---:|---:|',
    `| claimed success | ${t.claimed_and_passed} | ${t.claimed_but_failed} |`,
    `| no claim | ${t.unclaimed_but_passed} | ${t.unclaimed_and_failed} |`,
    '',
    '| domain | scored | mean score | graded success rate | claimed success rate |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const [domain, d] of Object.entries(graded.per_domain).sort(([a], [b]) =>
    a.localeCompare(b),
  ))
    lines.push(
      `| ${domain} | ${d.scored} | ${d.mean_score ?? 'n/a'} | ${rateText(d.graded_success_rate)} | ${rateText(d.claimed_success_rate)} |`,
    );
  return lines;
}
