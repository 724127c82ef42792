import type { RunListRow, RunResponse, RunRow } from './api';
import { percent, usd } from './format';
import { Panel } from './sql-panel';

// What a run's limits say of it (issue 23): the fence that stops workers taking its tasks, both
// scores (infra failures counted as failures, and excluded), and the spend of its settled tasks
// against its limit and per-task limit. A spend nobody could price is "unpriced", never $0.

type LimitsOf = Pick<
  RunListRow,
  | 'unpriced'
  | 'cost_usd'
  | 'max_cost_usd'
  | 'max_task_cost_usd'
  | 'over_limit_usd'
  | 'tasks_over_limit'
  | 'max_task_over_usd'
>;

/** A cost, or "unpriced" when the run's model has no price. */
export const spentText = (run: Pick<LimitsOf, 'unpriced' | 'cost_usd'>): string =>
  run.unpriced ? 'unpriced' : usd(run.cost_usd);

/** What the run spent past its limit: "within", "$x over", or "unpriced" (its spend is unknown). */
function overshootText(run: LimitsOf): string {
  if (run.unpriced || run.over_limit_usd === null) return 'unpriced';
  return run.over_limit_usd > 0 ? `${usd(run.over_limit_usd)} over` : 'within';
}

/** The tasks past the per-task limit and the worst overshoot. */
function taskOvershootText(run: LimitsOf): string {
  if (run.tasks_over_limit === 0) return run.unpriced ? 'unpriced' : 'none';
  return `${run.tasks_over_limit} task(s), worst ${usd(run.max_task_over_usd)} over`;
}

/** The fence, said once at the top of the run page; an infra pause with the command that lifts it. */
export function HaltBanner({ run }: { run: RunRow }) {
  if (run.halt === 'budget')
    return (
      <p className="banner banner-error" data-banner="halt" data-halt="budget">
        <strong>This run stopped at its spend limit</strong>:{' '}
        <span data-field="halt-reason">{run.halt_reason ?? 'no reason recorded'}</span>. Workers
        take no new task of it, and its open tasks ended as <code>budget</code> stops.
      </p>
    );
  if (run.halt === 'infra')
    return (
      <p className="banner banner-warning" data-banner="halt" data-halt="infra">
        <strong>This run is paused on infrastructure errors</strong>:{' '}
        <span data-field="halt-reason">{run.halt_reason ?? 'no reason recorded'}</span>. Fix the
        infrastructure, then resume it:{' '}
        <code data-field="resume-command">npx scheduler resume {run.run_id}</code>
      </p>
    );
  return null;
}

/** Both scores and the counts behind them, for the run page's progress panel. */
export function ScoreMetrics({ run }: { run: RunRow }) {
  return (
    <>
      <div data-metric="success-rate-excluding-infra">
        <dt title="success over the settled tasks that ended on the agent's own outcome: infra failures and spend-limit stops left out">
          success rate, infra failures excluded
        </dt>
        <dd>{percent(run.success_rate_excluding_infra)}</dd>
      </div>
      <div data-metric="infra-failed">
        <dt title="tasks that ended in an error of the infrastructure, not of the agent">
          infra-failed
        </dt>
        <dd>{run.infra_failed}</dd>
      </div>
      <div data-metric="budget-stopped">
        <dt title="tasks stopped by a spend limit: neither the agent's failure nor an infra fault">
          budget-stopped
        </dt>
        <dd>{run.budget_stopped}</dd>
      </div>
    </>
  );
}

/** The run's spend against its limits, the overshoot, the projection and the infra-error budget. */
export function SpendLimitsPanel({ response }: { response: RunResponse }) {
  const { run } = response;
  const hasTaskLimit = run.max_task_cost_usd !== null;
  return (
    <Panel id="limits" title="Spend and limits" queries={response.queries.slice(0, 1)}>
      <dl className="counts" data-counts="limits">
        <div data-metric="limit-spent">
          <dt title="sum of tasks.cost_usd over the settled tasks (the LLM panel has the governor's live count)">
            spent (settled tasks)
          </dt>
          <dd>{spentText(run)}</dd>
        </div>
        <div data-metric="run-limit">
          <dt>run limit</dt>
          <dd>{run.max_cost_usd === null ? 'none' : usd(run.max_cost_usd)}</dd>
        </div>
        {run.max_cost_usd !== null && (
          <div data-metric="run-overshoot">
            <dt title="spent past the run's limit: at most one call per task in flight">
              past the run limit
            </dt>
            <dd>{overshootText(run)}</dd>
          </div>
        )}
        <div data-metric="task-limit">
          <dt>per-task limit</dt>
          <dd>{hasTaskLimit ? usd(run.max_task_cost_usd) : 'none'}</dd>
        </div>
        {hasTaskLimit && (
          <div data-metric="task-overshoot">
            <dt>tasks past the per-task limit</dt>
            <dd>{taskOvershootText(run)}</dd>
          </div>
        )}
        <div data-metric="limit-projected">
          <dt title="settled tasks' cost ÷ those that ran × the tasks that run or will">
            projected run cost
          </dt>
          <dd>{run.unpriced ? 'unpriced' : usd(run.projected_cost_usd ?? undefined)}</dd>
        </div>
        <div data-metric="infra-budget">
          <dt title="above this share of infra failures among the last settled tasks, the run pauses">
            infra-error budget
          </dt>
          <dd>
            {run.max_infra_error_rate === null
              ? 'none'
              : `${percent(run.max_infra_error_rate)} of the last ${run.infra_window ?? 20} settled tasks`}
          </dd>
        </div>
      </dl>
    </Panel>
  );
}

/** The runs list's cost cell: spend, then the limit and what went past it. */
export function RunCostCell({ run }: { run: RunListRow }) {
  return (
    <td className="num" data-cell="cost">
      <span data-cell="spent">{spentText(run)}</span>
      {run.max_cost_usd !== null && (
        <div className="muted small" data-cell="run-limit">
          limit {usd(run.max_cost_usd)}
          {run.over_limit_usd !== null && run.over_limit_usd > 0 && (
            <span data-cell="overshoot"> · {usd(run.over_limit_usd)} over</span>
          )}
        </div>
      )}
      {run.max_task_cost_usd !== null && (
        <div className="muted small" data-cell="task-limit">
          task limit {usd(run.max_task_cost_usd)} · {taskOvershootText(run)}
        </div>
      )}
    </td>
  );
}

/** The runs list's second score and the counts it leaves out, under the first. */
export function RunScoresLines({ run }: { run: RunListRow }) {
  return (
    <>
      <div data-cell="success-excluding-infra">
        {percent(run.success_rate_excluding_infra)}{' '}
        <span className="muted small">infra excluded</span>
      </div>
      {(run.infra_failed > 0 || run.budget_stopped > 0) && (
        <div className="muted small" data-cell="not-the-agents">
          {run.infra_failed} infra-failed · {run.budget_stopped} budget-stopped
        </div>
      )}
    </>
  );
}

/** The fence, under the run's status in the runs list. */
export function RunHaltLine({ run }: { run: RunListRow }) {
  if (run.halt === null) return null;
  return (
    <div className="small" data-cell="halt" title={run.halt_reason ?? ''}>
      {run.halt === 'budget' ? 'stopped at its spend limit' : 'paused on infra errors'}
    </div>
  );
}
