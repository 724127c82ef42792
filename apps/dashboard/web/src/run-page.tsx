import { useCallback, useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { runProgress } from '../../shared/run-progress';
import {
  ApiError,
  apiGet,
  pageData,
  type FleetResponse,
  type LlmUsageResponse,
  type PanelsResponse,
  type RunAboutResponse,
  type BenchmarkView,
  type RunResponse,
  type RunRow,
  type ShownQuery,
  type TaskRow,
  type TasksResponse,
} from './api';
import { benchmarkView } from './benchmark-views';
import { decimal, duration, modelOrAgent, percent, spanSeconds, timestamp } from './format';
import { useLiveRun } from './live-run';
import { HaltBanner, ScoreMetrics, SpendLimitsPanel, spentText } from './limits-panels';
import { LlmPanel } from './llm-panel';
import { ConfigurationPanel, DownloadsPanel, ProvenancePanel } from './run-about-panels';
import { TaskPanels } from './task-panels';
import { NotFoundPage } from './not-found-page';
import { DistributionPanels, DomainsPanel, FailuresPanel } from './run-panels';
import { Link, useTitle } from './router';
import { RunPhasesPanel, RunTimelinePanel } from './run-time-panels';
import { Panel } from './sql-panel';
import { TaskTable } from './task-table';

/** Rows of values to objects, by a plain loop: a 60,000-sample run made 900,000 entry pairs otherwise. */
function decodeTasks(response: TasksResponse): TaskRow[] {
  const { columns } = response;
  return response.rows.map((values) => {
    const task: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i += 1) task[columns[i]!] = values[i];
    return task as unknown as TaskRow;
  });
}

/** The run's task rows: loaded once, then merged with the rows that changed since the last read. */
function useRunTasks(runId: string): {
  tasks: TaskRow[];
  query: ShownQuery | undefined;
  refresh: () => void;
  error: unknown;
} {
  const [tasks, setTasks] = useState<TaskRow[]>([]);
  const [query, setQueryText] = useState<ShownQuery>();
  const [error, setError] = useState<unknown>();
  const state = useRef<{
    asOf: string | undefined;
    byId: Map<string, TaskRow>;
    loading: boolean;
    again: boolean;
  }>({ asOf: undefined, byId: new Map(), loading: false, again: false });
  const load = useCallback(async () => {
    const current = state.current;
    if (current.loading) {
      current.again = true;
      return;
    }
    current.loading = true;
    try {
      const since = current.asOf ? `?since=${encodeURIComponent(current.asOf)}` : '';
      const response = await apiGet<TasksResponse>(
        `/api/runs/${encodeURIComponent(runId)}/tasks${since}`,
      );
      for (const task of decodeTasks(response)) current.byId.set(task.task_id, task);
      current.asOf = response.as_of;
      if (!since) setQueryText(response.query);
      setTasks([...current.byId.values()].sort((a, b) => a.seq - b.seq));
      setError(undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      current.loading = false;
      if (current.again) {
        current.again = false;
        void load();
      }
    }
  }, [runId]);
  useEffect(() => {
    state.current = { asOf: undefined, byId: new Map(), loading: false, again: false };
    void load();
  }, [load]);
  return { tasks, query, refresh: () => void load(), error };
}

const encode = encodeURIComponent;

const takePageRun = pageData<RunResponse>('initial-run');

/** The run as the server read it when it sent the page, if this is that run. */
function initialRun(runId: string): RunResponse | undefined {
  const initial = takePageRun();
  return initial?.run.run_id === runId ? initial : undefined;
}

export function RunPage({ runId }: { runId: string }) {
  const run = useQuery({
    queryKey: ['run', runId, 'summary'],
    queryFn: () => apiGet<RunResponse>(`/api/runs/${encode(runId)}`),
    initialData: () => initialRun(runId),
  });
  const panels = useQuery({
    queryKey: ['run', runId, 'panels'],
    queryFn: () => apiGet<PanelsResponse>(`/api/runs/${encode(runId)}/panels`),
  });
  const fleet = useQuery({
    queryKey: ['run', runId, 'fleet'],
    queryFn: () => apiGet<FleetResponse>(`/api/runs/${encode(runId)}/fleet`),
    refetchInterval: 3_000,
  });
  const about = useQuery({
    queryKey: ['run', runId, 'about'],
    queryFn: () => apiGet<RunAboutResponse>(`/api/runs/${encode(runId)}/about`),
  });
  const llm = useQuery({
    queryKey: ['run', runId, 'llm'],
    queryFn: () => apiGet<LlmUsageResponse>(`/api/runs/${encode(runId)}/llm`),
    refetchInterval: 2_000,
  });
  const tasks = useRunTasks(runId);
  const [searchQuery, setSearchQuery] = useState<ShownQuery | undefined>();
  useLiveRun(runId, tasks.refresh);
  useTitle(run.data?.run.name ?? runId);

  if (run.error instanceof ApiError && run.error.status === 404)
    return <NotFoundPage what={`There is no run ${runId}.`} />;
  if (!run.data)
    return (
      <p className="muted">
        {run.isError ? `Could not load the run: ${run.error.message}` : 'Loading…'}
      </p>
    );
  const { run: r, provisional } = run.data;
  const display = benchmarkView(r.benchmark);

  return (
    <div className="run-page" data-page="run">
      <RunHeader run={r} provisional={provisional} />
      <HaltBanner run={r} />
      <ProgressPanel response={run.data} display={display} />
      <SpendLimitsPanel response={run.data} />
      {about.data && <TaskPanels panels={about.data.panels} queries={about.data.panel_queries} />}
      <ProvenancePanel response={run.data} about={about.data} display={display} />
      <LlmPanel usage={llm.data} />
      <FleetPanel fleet={fleet.data} pending={r.queued + r.running} runId={runId} />
      <FailuresPanel panels={panels.data} runId={runId} reasonLabel={display.failureReasonLabel} />
      <DomainsPanel
        panels={panels.data}
        runId={runId}
        gradeLabel={(run.data.grade?.graded ?? 0) > 0 ? (display.grade?.label ?? null) : null}
      />
      <DistributionPanels panels={panels.data} />
      <RunPhasesPanel runId={runId} />
      <RunTimelinePanel runId={runId} />
      <Panel
        id="tasks"
        title="Tasks"
        queries={[tasks.query, searchQuery].filter((query) => query !== undefined)}
      >
        <TaskTable
          runId={runId}
          tasks={tasks.tasks}
          gradeLabel={display.grade?.label ?? null}
          onSearchQuery={setSearchQuery}
        />
      </Panel>
      <ConfigurationPanel response={run.data} />
      <DownloadsPanel runId={runId} about={about.data} />
    </div>
  );
}

function RunHeader({ run: r, provisional }: { run: RunRow; provisional: boolean }) {
  return (
    <header className="page-header">
      <h1>
        {r.name} <span className={`status status-${r.run_status}`}>{r.run_status}</span>
        {provisional && (
          <span
            className="provisional"
            data-provisional="true"
            title="The aggregate summary of this run has not been written yet"
          >
            provisional
          </span>
        )}
      </h1>
      <p className="muted">
        {r.run_id} · {r.benchmark} · {modelOrAgent(r.model, r.agent)} · started{' '}
        {timestamp(r.started_at ?? r.created_at)} ·{' '}
        <Link href={`/compare?a=${encode(r.run_id)}`}>compare with…</Link> ·{' '}
        <Link href={`/grid?run=${encode(r.run_id)}`}>grid</Link>
      </p>
    </header>
  );
}

function ProgressPanel({ response, display }: { response: RunResponse; display: BenchmarkView }) {
  const { run: r, done, eta_seconds: eta, provisional, grade } = response;
  const pending = r.queued + r.running;
  const progress = runProgress(r);
  return (
    <Panel id="progress" title="Progress" queries={response.queries}>
      <div className="progress-line">
        <progress max={r.total || 1} value={progress.ran} data-ran={progress.ran} />
        <span data-progress="done" data-settled={done}>
          {progress.text}
        </span>
        <span data-progress="eta">
          {pending > 0
            ? eta !== null
              ? `ETA ${duration(eta)}`
              : 'ETA –'
            : r.run_status === 'cancelled'
              ? 'cancelled'
              : 'complete'}
        </span>
      </div>
      <dl className="counts" data-counts="status">
        {(
          [
            ['queued', r.queued],
            ['running', r.running],
            ['success', r.succeeded],
            ['failed', r.failed],
            ['cancelled', r.cancelled],
            ['error', r.errors],
          ] as const
        ).map(([status, count]) => (
          <div key={status} data-count={status}>
            <dt className={`status status-${status}`}>{status}</dt>
            <dd>{count}</dd>
          </div>
        ))}
      </dl>
      <dl className="counts">
        <div data-metric="success-rate">
          <dt
            title={`${display.successExplanation} Infra failures and spend-limit stops count as failures.`}
          >
            success rate ({display.successLabel})
          </dt>
          <dd>{percent(r.success_rate)}</dd>
        </div>
        <ScoreMetrics run={r} />
        {display.grade && grade && (grade.graded ?? 0) > 0 && (
          <>
            <div data-metric="graded-success-rate">
              <dt title={display.grade.meaning}>success rate ({display.grade.label})</dt>
              <dd>
                {percent(grade.graded_success_rate)}{' '}
                <span className="muted small">of {grade.scored} scored</span>
              </dd>
            </div>
            <div data-metric="mean-score">
              <dt title={display.grade.meaning}>mean {display.grade.label} score</dt>
              <dd>{decimal(grade.mean_score, 4)}</dd>
            </div>
          </>
        )}
        {response.epochs && <EpochMetrics epochs={response.epochs} />}
        <div data-metric="mean-reward">
          <dt>mean reward</dt>
          <dd>{decimal(r.avg_reward)}</dd>
        </div>
        <div>
          <dt>mean steps</dt>
          <dd>{decimal(r.avg_steps ?? null, 2)}</dd>
        </div>
        <div>
          <dt>duration</dt>
          <dd>{duration(spanSeconds(r.started_at, r.finished_at))}</dd>
        </div>
        <div data-metric="cost">
          <dt>cost</dt>
          <dd>{spentText(r)}</dd>
        </div>
      </dl>
      {provisional && (
        <p className="muted small">
          Numbers are provisional until the aggregate job writes the run summary (after the last
          task settles).
        </p>
      )}
    </Panel>
  );
}

/** A run of several epochs: pass@N and pass^N over the tasks whose every epoch settled, the flip rate. */
function EpochMetrics({ epochs: e }: { epochs: NonNullable<RunResponse['epochs']> }) {
  const over = `over the ${e.tasks} tasks whose every epoch settled`;
  return (
    <>
      <div data-metric="epochs">
        <dt title="Each task ran this many times as an independent sample (enqueue --epochs)">
          epochs
        </dt>
        <dd>{e.epochs}</dd>
      </div>
      <div data-metric="pass-at-n">
        <dt title={`pass@${e.epochs}: the task passed in at least one epoch, ${over}`}>
          pass@{e.epochs}
        </dt>
        <dd>{percent(e.pass_at_n)}</dd>
      </div>
      <div data-metric="pass-hat-n">
        <dt title={`pass^${e.epochs}: the task passed in every epoch, ${over}`}>pass^{e.epochs}</dt>
        <dd>{percent(e.pass_hat_n)}</dd>
      </div>
      <div data-metric="flip-rate">
        <dt title={`Share of tasks whose verdict differs between epochs, ${over}`}>flip rate</dt>
        <dd>{percent(e.flip_rate)}</dd>
      </div>
    </>
  );
}

function FleetPanel({
  fleet,
  pending,
  runId,
}: {
  fleet: FleetResponse | undefined;
  pending: number;
  runId: string;
}) {
  if (!fleet) return null;
  const idle = pending > 0 && !fleet.consumed;
  return (
    <Panel
      id="fleet"
      title={`Workers on queue ${fleet.queue}`}
      queries={undefined}
      actions={
        <span className="muted small">
          from BullMQ (Redis), not SQL · <a href="/queues">queue view</a>
        </span>
      }
    >
      {fleet.redis === 'down' && (
        <p className="error">Redis does not answer: workers and queue counts are unknown.</p>
      )}
      {idle && fleet.redis === 'up' && (
        <p className="banner banner-warning" data-banner="not-consumed">
          Nothing is consuming this run: {pending} tasks are pending and no worker is connected to
          queue {fleet.queue}. Start one: <code>{fleet.worker_command}</code>
        </p>
      )}
      <p className="muted small" data-queue-counts>
        {Object.entries(fleet.counts)
          .map(([state, count]) => `${state} ${count}`)
          .join(' · ')}
      </p>
      {fleet.workers.length > 0 && (
        <table className="grid" data-table="workers">
          <thead>
            <tr>
              <th>Worker</th>
              <th>State</th>
              <th>Connected for</th>
              <th>Running now (this run)</th>
              <th className="num">Other runs</th>
            </tr>
          </thead>
          <tbody>
            {fleet.workers.map((worker) => (
              <tr key={worker.name} data-worker={worker.name}>
                <td>{worker.name}</td>
                <td data-cell="state">
                  {worker.state}
                  {worker.reason && <span className="muted">: {worker.reason}</span>}
                </td>
                <td>{duration(worker.age_seconds)}</td>
                <td>
                  {worker.current.length === 0 && <span className="muted">idle</span>}
                  {worker.current.slice(0, 8).map((job) => (
                    <Link
                      key={job.task_id}
                      className="example"
                      href={`/runs/${encode(runId)}/tasks/${encode(job.task_id)}`}
                    >
                      {job.task_id}
                    </Link>
                  ))}
                  {worker.current.length > 8 && (
                    <span className="muted"> +{worker.current.length - 8} more</span>
                  )}
                </td>
                <td className="num">{worker.other_active}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
