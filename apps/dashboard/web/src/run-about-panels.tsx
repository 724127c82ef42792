import type { ReactNode } from 'react';
import type { BenchmarkView, RunAboutResponse, RunResponse, RunRow } from './api';
import { modelOrAgent, timestamp } from './format';
import { Panel } from './sql-panel';

// A run's provenance (what ran, from which code, with which configuration), its configuration as
// stored, and its downloads (every export format as a zip; tables as CSV from their own buttons).

const encode = encodeURIComponent;

function Fact({ name, label, children }: { name: string; label: string; children: ReactNode }) {
  return (
    <div data-provenance={name}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

const json = (value: unknown) =>
  value === null || value === undefined ? '–' : JSON.stringify(value);

export function ProvenancePanel({
  response,
  about,
  display,
}: {
  response: RunResponse;
  about: RunAboutResponse | undefined;
  display: BenchmarkView;
}) {
  const r: RunRow = response.run;
  return (
    <Panel
      id="provenance"
      title="Provenance"
      queries={response.queries.filter((query) => query.name === 'run')}
    >
      <dl className="provenance">
        <Fact name="benchmark" label="benchmark">
          {r.benchmark} <span className="muted">— success: {display.successLabel}</span>
          {display.grade && (
            <span className="muted">
              ; {display.grade.label}: {display.grade.meaning}
            </span>
          )}
        </Fact>
        <Fact name="code-version" label="code version">
          <code>{r.code_version}</code>
        </Fact>
        <Fact name="model" label="model">
          {r.model ? <code>{json(r.model)}</code> : <span className="muted">none recorded</span>}
        </Fact>
        <Fact name="agent" label="agent">
          {r.agent ? <code>{json(r.agent)}</code> : <span className="muted">none recorded</span>}{' '}
          <span className="muted">({modelOrAgent(r.model, r.agent)})</span>
        </Fact>
        {about?.provenance.map((fact) => (
          <Fact
            key={fact.label}
            name={fact.label.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}
            label={fact.label}
          >
            {fact.value === null ? (
              <span className="muted">not recorded</span>
            ) : (
              <code>{fact.value}</code>
            )}
          </Fact>
        ))}
        <Fact name="config-digest" label="configuration digest">
          <code title="sha256 of runs.config as JSON with its keys sorted and no spaces (psql -Atc &quot;select config from runs where id = '…'&quot; | jq -cS . | tr -d '\n' | sha256sum)">
            {about ? `sha256:${about.config_digest}` : '…'}
          </code>
        </Fact>
        <Fact name="created" label="created">
          {timestamp(r.created_at)}
        </Fact>
        <Fact name="started" label="started">
          {timestamp(r.started_at)}
        </Fact>
        <Fact name="finished" label="finished">
          {timestamp(r.finished_at)}
        </Fact>
      </dl>
    </Panel>
  );
}

export function ConfigurationPanel({ response }: { response: RunResponse }) {
  const { config, model, agent } = response.run;
  return (
    <Panel
      id="configuration"
      title="Configuration"
      queries={response.queries.filter((query) => query.name === 'run')}
    >
      <p className="muted small">
        As stored: <code>runs.config</code>, <code>runs.model</code> and <code>runs.agent</code>.
      </p>
      <pre className="json" data-field="configuration">
        {JSON.stringify({ config, model, agent }, null, 2)}
      </pre>
    </Panel>
  );
}

export function DownloadsPanel({
  runId,
  about,
}: {
  runId: string;
  about: RunAboutResponse | undefined;
}) {
  return (
    <Panel id="downloads" title="Downloads" queries={undefined}>
      <p>
        Exports (a zip of what <code>scheduler export RUN --format F</code> writes):{' '}
        {about?.exports.map((format) => (
          <a
            key={format}
            className="download"
            data-export={format}
            href={`/api/runs/${encode(runId)}/exports/${encode(format)}`}
            download
          >
            {format}.zip
          </a>
        ))}
      </p>
      <p className="muted small">
        Every table has a CSV button: the rows it shows, with its filters and sort.
      </p>
    </Panel>
  );
}
