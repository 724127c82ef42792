import { useEffect, useRef } from 'react';
import type { StepRow } from './api';
import { decimal } from './format';
import { Panel } from './sql-panel';
import { StepNavigation } from './step-navigation';
import type { TrajectoryPanelProps } from './trajectory-panel';

// The `steps` trajectory panel, for a benchmark that chose none: every step as the row it was
// recorded as, whatever its action looks like, and the chosen step in full below the table.

const PREVIEW = 120;

/** The start of a text on one line, for the table; the chosen step shows all of it. */
function preview(text: string | null): string {
  if (!text) return '';
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > PREVIEW ? `${line.slice(0, PREVIEW)}…` : line;
}

function actionText(step: StepRow): string {
  return step.action === null ? '' : JSON.stringify(step.action);
}

function ChosenStep({ step }: { step: StepRow }) {
  return (
    <div className="step-text" data-chosen-step={step.step}>
      <h3>Step {step.step}: action</h3>
      <pre className="json" data-field="action">
        {step.action === null ? '(none)' : JSON.stringify(step.action, null, 2)}
      </pre>
      <h3>Text</h3>
      <pre className="model-text" data-field="text">
        {step.text || '(none)'}
      </pre>
      <h3>Observation</h3>
      <pre className="observation" data-field="observation">
        {step.observation || '(none)'}
      </pre>
    </div>
  );
}

export function StepTable({ steps, index, onIndex, queries }: TrajectoryPanelProps) {
  const body = useRef<HTMLTableSectionElement>(null);
  useEffect(() => {
    body.current?.querySelector('[aria-current="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [index]);
  const chosen = steps[index];
  return (
    <Panel id="steps" title={`Steps (${steps.length})`} queries={queries}>
      <StepNavigation index={index} count={steps.length} onIndex={onIndex} />
      <table className="grid" data-table="steps">
        <thead>
          <tr>
            <th className="num">Step</th>
            <th>Action</th>
            <th>Text</th>
            <th>Observation</th>
            <th className="num">Reward</th>
            <th className="num">Tokens in / out</th>
            <th className="num">Latency</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {steps.map((step, i) => (
            <tr
              key={step.step}
              data-step={step.step}
              aria-current={i === index}
              className={i === index ? 'active' : ''}
              onClick={() => onIndex(i)}
            >
              <td className="num">{step.step}</td>
              <td className="message" data-cell="action">
                <code>{preview(actionText(step))}</code>
              </td>
              <td className="message" data-cell="text">
                {preview(step.text)}
              </td>
              <td className="message" data-cell="observation">
                {preview(step.observation)}
              </td>
              <td className="num" data-cell="reward">
                {decimal(step.reward)}
              </td>
              <td className="num">
                {step.tokens_in} / {step.tokens_out}
              </td>
              <td className="num">{step.latency_ms === null ? '–' : `${step.latency_ms} ms`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosen && <ChosenStep step={chosen} />}
    </Panel>
  );
}
