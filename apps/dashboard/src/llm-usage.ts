import { defineQuery, runNamedQuery, type Database } from '@benchfleet/db';
import type { LaneSnapshot, LlmGovernor, RunLaneSpend } from '@benchfleet/llm-governor';
import type { LlmLaneRow, LlmUsageResponse, RunRow, RunSpendRow } from '../shared/view-rows.js';
import { shown } from './shown-sql.js';

// The run page's LLM panel: the lanes (provider, key fingerprint, model) this run's calls went
// through, with the lane's live state from the governor's snapshot and the run's own calls on it
// (other runs sharing a lane are not counted), and the run's spend from Postgres with its projection.

const SETTLED = `t.status in ('success', 'failed', 'cancelled', 'error')`;

/**
 * Spend of the settled tasks (unknown when one that ran has no price, as `run_summary` says), and
 * two projections: spent ÷ settled × total; and, better when domains differ in cost and run in
 * order, spent plus each open task at the mean cost of the tasks of its domain that ran (the run's
 * mean where none of its domain ran yet). Tasks cancelled before they started cost nothing.
 */
export const runSpendQuery = defineQuery({
  name: 'run_spend',
  title: "The run's spend (settled tasks) and its projected spend",
  params: ['run'],
  sql: `
with per_domain as (
  select t.domain,
         count(*)::int as total,
         count(*) filter (where ${SETTLED})::int as settled,
         count(*) filter (where ${SETTLED} and t.attempts > 0)::int as ran,
         count(*) filter (where t.status in ('queued', 'running'))::int as open,
         coalesce(bool_or(t.cost_usd is null and ${SETTLED} and t.attempts > 0), false) as unpriced,
         coalesce(sum(t.cost_usd) filter (where ${SETTLED}), 0)::float8 as spent
  from tasks t
  where t.run_id = :run
  group by t.domain
), whole as (
  select sum(total)::int as total, sum(settled)::int as settled, sum(ran)::int as ran,
         bool_or(unpriced) as unpriced, sum(spent)::float8 as spent
  from per_domain
)
select coalesce(w.total, 0) as total_tasks, coalesce(w.settled, 0) as settled_tasks,
       case when w.unpriced then null else coalesce(w.spent, 0) end as spent_usd,
       case when w.unpriced or coalesce(w.settled, 0) = 0 then null
            else w.spent / w.settled * w.total end as projected_simple_usd,
       case when w.unpriced or coalesce(w.ran, 0) = 0 then null
            else w.spent + (select sum(d.open * case when d.ran > 0 then d.spent / d.ran else w.spent / w.ran end)
                            from per_domain d) end as projected_usd
from whole w`,
});

/** The name of the model the run asked for (`runs.model.name`, else `runs.agent.model`). */
function runModelName(run: Pick<RunRow, 'model' | 'agent'>): string | undefined {
  const name = run.model?.['name'] ?? run.agent?.['model'];
  return typeof name === 'string' ? name : undefined;
}

function laneRow(lane: LaneSnapshot, own: RunLaneSpend, model: string | undefined): LlmLaneRow {
  const { limits } = lane;
  return {
    lane_id: lane.laneId,
    provider: lane.provider,
    key_fingerprint: lane.keyFingerprint,
    model: lane.model,
    run_model: lane.model === model,
    requests_per_minute: lane.requestsPerMinute,
    requests_limit: limits.requestsPerMinute.configured ?? limits.requestsPerMinute.learned ?? null,
    tokens_per_minute: lane.tokensPerMinute,
    tokens_limit: limits.tokensPerMinute.configured ?? limits.tokensPerMinute.learned ?? null,
    rate_limited_per_minute: lane.rateLimitedPerMinute,
    concurrency_target: lane.concurrency.target,
    in_flight: lane.concurrency.inFlight,
    max_concurrency: limits.maxConcurrency,
    held_off_ms: lane.heldOffForMs,
    run_calls: own.calls,
    run_tokens_in: own.tokensIn,
    run_tokens_out: own.tokensOut,
    run_spent_usd: own.unpricedCalls > 0 ? null : own.usd,
  };
}

/** The LLM panel of a run: the lanes it used (its model first) and the run's spend. */
export async function loadLlmUsage(
  db: Database,
  governor: LlmGovernor,
  run: Pick<RunRow, 'run_id' | 'model' | 'agent'>,
): Promise<LlmUsageResponse> {
  const values = { run: run.run_id };
  const [[spend], readings] = await Promise.all([
    runNamedQuery<RunSpendRow, 'run'>(db, runSpendQuery, values),
    Promise.all([
      governor.snapshot(),
      governor.runSpend(run.run_id),
      governor.runLaneSpend(run.run_id),
    ]).catch(() => undefined),
  ]);
  const model = runModelName(run);
  const ownByLane = readings?.[2] ?? new Map<string, RunLaneSpend>();
  // Only the lanes this run used: another run's lanes are its own business.
  const lanes = (readings?.[0].lanes ?? [])
    .flatMap((lane) => {
      const own = ownByLane.get(lane.laneId);
      return own === undefined ? [] : [laneRow(lane, own, model)];
    })
    .sort(
      (a, b) =>
        Number(b.run_model) - Number(a.run_model) ||
        a.model.localeCompare(b.model) ||
        a.key_fingerprint.localeCompare(b.key_fingerprint),
    );
  return {
    redis: readings ? 'up' : 'down',
    lanes,
    governor_spend: readings
      ? {
          usd: readings[1].usd,
          calls: readings[1].calls,
          unpriced_calls: readings[1].unpricedCalls,
        }
      : null,
    spend: spend ?? {
      total_tasks: 0,
      settled_tasks: 0,
      spent_usd: 0,
      projected_simple_usd: null,
      projected_usd: null,
    },
    redis_keys: governor.keysRead(
      lanes.map((lane) => lane.lane_id),
      run.run_id,
    ),
    queries: [shown(runSpendQuery, values)],
  };
}
