import { useEffect, useRef } from 'react';
import { Panel } from './sql-panel';
import { StepNavigation } from './step-navigation';
import type { TrajectoryPanelProps } from './trajectory-panel';

// The `pages` trajectory panel, for text environments: each step's action string, whether it was
// valid, what the agent could do at that moment, and the page (observation) the action led to.

/** The fields of `steps.action` this panel reads; any of them may be missing. */
interface PageAction {
  action?: string;
  kind?: string;
  valid?: boolean;
  invalid_reason?: string;
  thought?: string;
  available_actions?: { has_search_bar?: boolean; clickables?: string[] };
}

export function PageSteps({ steps, index, onIndex, queries }: TrajectoryPanelProps) {
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    list.current?.querySelector('[aria-current="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [index]);
  return (
    <Panel id="steps" title={`Steps (${steps.length})`} queries={queries}>
      <StepNavigation index={index} count={steps.length} onIndex={onIndex} />
      <ol className="page-steps" ref={list}>
        {steps.map((step, i) => {
          const action = (step.action ?? {}) as PageAction;
          const available = action.available_actions;
          const chosen = /^click\[(.*)\]$/.exec(action.action ?? '')?.[1];
          return (
            <li
              key={step.step}
              className={`page-step${i === index ? ' active' : ''}`}
              aria-current={i === index}
              data-step={step.step}
              onClick={() => onIndex(i)}
            >
              <div className="step-head">
                <strong>Step {step.step}</strong>{' '}
                <code data-field="action">{action.action ?? '(none)'}</code>{' '}
                {action.valid === false ? (
                  <span className="status status-failed">
                    invalid{action.invalid_reason ? `: ${action.invalid_reason}` : ''}
                  </span>
                ) : (
                  <span className="muted small">{action.kind}</span>
                )}
                {step.reward ? <span className="chip">reward {step.reward.toFixed(3)}</span> : null}
              </div>
              {action.thought && (
                <p className="thought" data-field="thought">
                  {action.thought}
                </p>
              )}
              {step.text && step.text !== action.action && (
                <details>
                  <summary>model output</summary>
                  <pre className="model-text" data-field="model-text">
                    {step.text}
                  </pre>
                </details>
              )}
              {available && (
                <div className="available" data-field="available-actions">
                  <span className="muted small">available: </span>
                  {available.has_search_bar && <span className="chip">search[…]</span>}
                  {(available.clickables ?? []).map((clickable) => (
                    <span
                      key={clickable}
                      className={`chip${clickable === chosen ? ' chosen' : ''}`}
                    >
                      click[{clickable}]
                    </span>
                  ))}
                </div>
              )}
              {i === index && (
                <pre className="observation" data-field="observation">
                  {step.observation ?? ''}
                </pre>
              )}
            </li>
          );
        })}
      </ol>
      <p className="muted small">
        Each step shows the agent's action, what it could do at that moment, and the page the action
        led to.
      </p>
    </Panel>
  );
}
