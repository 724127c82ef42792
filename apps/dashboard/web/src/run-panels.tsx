import { lazy, Suspense } from 'react';
import type { CsvColumn } from '../../shared/csv';
import type { DomainRow, PanelsResponse } from './api';
import { CsvButton } from './csv-button';
import { decimal, percent, usd } from './format';
import { Link } from './router';
import { Panel } from './sql-panel';

// The run page's panels below its progress: failures, per-domain results and the distributions.

const encode = encodeURIComponent;

// Observable Plot is most of the bundle: loaded after the first paint, only where charts are drawn.
const BarChart = lazy(() => import('./charts').then((module) => ({ default: module.BarChart })));

/** All 30 duration bins, empty ones too, so that the axis is a true time axis. */
function durationBars(rows: PanelsResponse['durations']['rows']) {
  const width = rows[0]?.bin_seconds ?? 0;
  const byBin = new Map(rows.map((row) => [row.bin, row]));
  return rows.length === 0
    ? []
    : Array.from({ length: 30 }, (_, bin) => ({
        x: bin,
        label: (bin * width).toFixed(width < 1 ? 2 : 1),
        tasks: byBin.get(bin)?.tasks ?? 0,
        succeeded: byBin.get(bin)?.succeeded ?? 0,
      }));
}

/** Tasks that did not succeed, grouped; the benchmark's own reason gets a column when any group has one. */
export function FailuresPanel({
  panels,
  runId,
  reasonLabel,
}: {
  panels: PanelsResponse | undefined;
  runId: string;
  reasonLabel: string | null;
}) {
  const failureReasons = panels?.failures.rows.some((failure) => failure.reason) === true;
  return (
    <Panel
      id="failures"
      title="Failures"
      queries={panels ? [panels.failures.query] : undefined}
      actions={
        panels && (
          <CsvButton
            name="failures"
            fileName={`${runId}-failures.csv`}
            columns={FAILURE_CSV}
            rows={() => panels.failures.rows}
          />
        )
      }
    >
      {panels && panels.failures.rows.length === 0 && (
        <p className="muted">No failed, cancelled or errored task.</p>
      )}
      {panels && panels.failures.rows.length > 0 && (
        <table className="grid" data-table="failures">
          <thead>
            <tr>
              <th>Status</th>
              <th>Class</th>
              <th>Final status / stop</th>
              {failureReasons && <th>{reasonLabel}</th>}
              <th>Message</th>
              <th className="num">Tasks</th>
              <th>Examples</th>
            </tr>
          </thead>
          <tbody>
            {panels.failures.rows.map((failure, i) => (
              <tr key={i} data-reason={failure.reason ?? ''} data-class={failure.error_class}>
                <td>
                  <span className={`status status-${failure.status}`}>{failure.status}</span>
                </td>
                <td data-cell="class" title={CLASS_MEANINGS[failure.error_class]}>
                  {failure.error_class}
                </td>
                <td>
                  {[failure.final_api_status, failure.stop_reason].filter(Boolean).join(' / ')}
                </td>
                {failureReasons && <td data-cell="reason">{failure.reason ?? ''}</td>}
                <td className="message">{failure.message}</td>
                <td className="num">{failure.tasks}</td>
                <td>
                  {failure.examples.map((taskId) => (
                    <Link
                      key={taskId}
                      className="example"
                      href={`/runs/${encode(runId)}/tasks/${encode(taskId)}`}
                    >
                      {taskId}
                    </Link>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

type FailureRow = PanelsResponse['failures']['rows'][number];

/** What each error class says of a task that did not succeed, on hover. */
const CLASS_MEANINGS: Record<string, string> = {
  agent: "the agent's own failure",
  infra: 'an infrastructure fault, not the agent',
  permanent: 'an error no retry would fix',
  budget: "stopped by a spend limit: neither the agent's failure nor an infra fault",
};

const FAILURE_CSV: CsvColumn<FailureRow>[] = (
  [
    'status',
    'error_class',
    'final_api_status',
    'stop_reason',
    'reason',
    'message',
    'tasks',
  ] as const
).map((key) => ({ label: key, value: (row: FailureRow) => row[key] }));
FAILURE_CSV.push({ label: 'examples', value: (row) => row.examples.join(' ') });

const DOMAIN_FIELDS = [
  'domain',
  'total',
  'succeeded',
  'failed',
  'cancelled',
  'errors',
  'pending',
  'success_rate',
  'avg_reward',
  'avg_steps',
  'cost_usd',
] as const;
const GRADE_FIELDS = ['graded', 'scored', 'graded_success_rate', 'mean_score'] as const;

function domainCsv(graded: boolean): CsvColumn<DomainRow>[] {
  return [...DOMAIN_FIELDS, ...(graded ? GRADE_FIELDS : [])].map((key) => ({
    label: key,
    value: (row: DomainRow) => row[key],
  }));
}

/** Per-domain results; with the grade's columns for a run that has graded tasks (`gradeLabel`). */
export function DomainsPanel({
  panels,
  runId,
  gradeLabel,
}: {
  panels: PanelsResponse | undefined;
  runId: string;
  gradeLabel: string | null;
}) {
  return (
    <Panel
      id="domains"
      title="Per domain"
      queries={panels ? [panels.domains.query] : undefined}
      actions={
        panels && (
          <CsvButton
            name="domains"
            fileName={`${runId}-domains.csv`}
            columns={domainCsv(gradeLabel !== null)}
            rows={() => panels.domains.rows}
          />
        )
      }
    >
      <table className="grid" data-table="domains">
        <thead>
          <tr>
            <th>Domain</th>
            <th className="num">Tasks</th>
            <th className="num">Success</th>
            <th className="num">Failed</th>
            <th className="num">Cancelled</th>
            <th className="num">Errors</th>
            <th className="num">Pending</th>
            <th className="num">Success rate</th>
            <th className="num">Mean reward</th>
            <th className="num">Mean steps</th>
            <th className="num">Cost</th>
            {gradeLabel && (
              <>
                <th className="num">Scored ({gradeLabel})</th>
                <th className="num">Success rate ({gradeLabel})</th>
                <th className="num">Mean score ({gradeLabel})</th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {panels?.domains.rows.map((d) => (
            <tr key={d.domain} data-domain={d.domain}>
              <td>{d.domain}</td>
              <td className="num">{d.total}</td>
              <td className="num">{d.succeeded}</td>
              <td className="num">{d.failed}</td>
              <td className="num">{d.cancelled}</td>
              <td className="num">{d.errors}</td>
              <td className="num">{d.pending}</td>
              <td className="num">{percent(d.success_rate)}</td>
              <td className="num">{decimal(d.avg_reward)}</td>
              <td className="num">{decimal(d.avg_steps, 2)}</td>
              <td className="num">{usd(d.cost_usd)}</td>
              {gradeLabel && (
                <>
                  <td className="num" data-cell="scored">
                    {d.scored ?? 0}
                  </td>
                  <td className="num" data-cell="graded-success-rate">
                    {percent(d.graded_success_rate)}
                  </td>
                  <td className="num" data-cell="mean-score">
                    {decimal(d.mean_score, 4)}
                  </td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </Panel>
  );
}

export function DistributionPanels({ panels }: { panels: PanelsResponse | undefined }) {
  return (
    <div className="two-columns">
      <Panel
        id="durations"
        title="Task durations"
        queries={panels ? [panels.durations.query] : undefined}
      >
        <Suspense fallback={<p className="muted">Loading chart…</p>}>
          {panels && (
            <BarChart
              name="durations"
              xLabel="seconds (bin start)"
              bars={durationBars(panels.durations.rows)}
            />
          )}
        </Suspense>
      </Panel>
      <Panel id="steps" title="Steps per task" queries={panels ? [panels.steps.query] : undefined}>
        <Suspense fallback={<p className="muted">Loading chart…</p>}>
          {panels && (
            <BarChart
              name="steps"
              xLabel="steps"
              bars={panels.steps.rows.map((row) => ({
                x: row.steps,
                label: String(row.steps),
                tasks: row.tasks,
                succeeded: row.succeeded,
              }))}
            />
          )}
        </Suspense>
      </Panel>
    </div>
  );
}
