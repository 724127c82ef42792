import { computeOsworldSummary, roundLikePython, type OsworldSummaryComputation } from '@benchfleet/osworld';
import { runsRepository, tasksRepository, type Database, type Task } from '@benchfleet/db';

export interface WebshopScores {
  /** Mean reward over all episodes, failed and errored ones counting 0. */
  average_reward: number;
  /** The paper's score: mean reward × 100. */
  score: number;
  /** Share of episodes with reward 1.0. */
  success_rate: number;
  /** Share of episodes that ended with a purchase. */
  bought_rate: number;
}

export interface RunSummary extends OsworldSummaryComputation {
  run_id: string;
  benchmark: string;
  pending: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  cost_per_success_usd: number | null;
  webshop?: WebshopScores;
  started_at: string | null;
  finished_at: string | null;
  total_duration_seconds: number | null;
}

function durationSeconds(task: Task): number {
  return roundLikePython((task.duration_ms ?? 0) / 1000, 1);
}

function webshopScores(tasks: Task[]): WebshopScores {
  const n = tasks.length;
  const rewardSum = tasks.reduce((sum, task) => sum + (task.reward ?? 0), 0);
  const bought = tasks.filter((task) => task.result && (task.result as { purchased_asin?: unknown }).purchased_asin).length;
  const successes = tasks.filter((task) => task.success === true).length;
  return {
    average_reward: n ? roundLikePython(rewardSum / n, 4) : 0,
    score: n ? roundLikePython((rewardSum / n) * 100, 2) : 0,
    success_rate: n ? roundLikePython(successes / n, 4) : 0,
    bought_rate: n ? roundLikePython(bought / n, 4) : 0,
  };
}

/** The run's summary from its Postgres rows only, so retries and resumes cannot skew it. */
export async function computeRunSummary(db: Database, runId: string): Promise<RunSummary> {
  const run = await runsRepository(db).get(runId);
  if (!run) throw new Error(`run ${runId} not found`);
  const tasks = await tasksRepository(db).listByRun(runId);
  const settled = tasks.filter((task) => task.status !== 'queued' && task.status !== 'running');
  const computation = computeOsworldSummary(
    settled.map((task) => ({
      task_id: task.task_id,
      domain: task.domain,
      status: task.status,
      total_steps: task.total_steps,
      duration_seconds: durationSeconds(task),
    })),
  );
  const tokensIn = tasks.reduce((sum, task) => sum + Number(task.tokens_in), 0);
  const tokensOut = tasks.reduce((sum, task) => sum + Number(task.tokens_out), 0);
  const cost = tasks.reduce((sum, task) => sum + Number(task.cost_usd), 0);
  const successes = settled.filter((task) => task.status === 'success').length;
  const starts = tasks.map((task) => task.started_at?.getTime()).filter((t): t is number => t !== undefined);
  const ends = settled.map((task) => task.finished_at?.getTime()).filter((t): t is number => t !== undefined);
  const startedAt = starts.length ? new Date(Math.min(...starts)) : null;
  const finishedAt = ends.length ? new Date(Math.max(...ends)) : null;
  return {
    run_id: runId,
    benchmark: run.benchmark,
    ...computation,
    pending: tasks.length - settled.length,
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    cost_usd: roundLikePython(cost, 6),
    cost_per_success_usd: successes ? roundLikePython(cost / successes, 6) : null,
    ...(run.benchmark === 'webshop' ? { webshop: webshopScores(settled) } : {}),
    started_at: startedAt?.toISOString() ?? null,
    finished_at: finishedAt?.toISOString() ?? null,
    total_duration_seconds: startedAt && finishedAt ? roundLikePython((finishedAt.getTime() - startedAt.getTime()) / 1000, 1) : null,
  };
}

/** Computes and stores the summary; the run counts as finished once nothing is pending. */
export async function aggregateRun(db: Database, runId: string): Promise<RunSummary> {
  const summary = await computeRunSummary(db, runId);
  await runsRepository(db).saveSummary(
    runId,
    summary as unknown as Record<string, unknown>,
    summary.pending === 0 && summary.finished_at ? new Date(summary.finished_at) : null,
  );
  return summary;
}

/** A Markdown report of the summary, for `scheduler aggregate --markdown`. */
export function summaryMarkdown(summary: RunSummary, runName: string): string {
  const s = summary.summary;
  const lines = [
    `# ${runName} (${summary.benchmark})`,
    '',
    `Run \`${summary.run_id}\`: ${s.total_tasks} tasks settled, ${summary.pending} pending.`,
    '',
    '| total | success | failed | cancelled | errors | success rate | avg steps | avg duration (s) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${s.total_tasks} | ${s.completed} | ${s.failed} | ${s.cancelled} | ${s.errors} | ${(s.success_rate * 100).toFixed(1)}% | ${s.avg_steps} | ${s.avg_duration_seconds} |`,
    '',
  ];
  if (summary.webshop) {
    const w = summary.webshop;
    lines.push('| score | average reward | success rate | bought |', '|---:|---:|---:|---:|');
    lines.push(`| ${w.score} | ${w.average_reward} | ${(w.success_rate * 100).toFixed(1)}% | ${(w.bought_rate * 100).toFixed(1)}% |`, '');
  }
  lines.push('| domain | total | success | success rate | avg steps |', '|---|---:|---:|---:|---:|');
  for (const [domain, d] of Object.entries(summary.per_domain).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`| ${domain} | ${d.total} | ${d.completed} | ${(d.success_rate * 100).toFixed(1)}% | ${d.avg_steps} |`);
  }
  lines.push('', `Tokens: ${summary.tokens_in} in, ${summary.tokens_out} out; cost $${summary.cost_usd}.`, '');
  return lines.join('\n');
}
