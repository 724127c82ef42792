import { useEffect, useRef, useState } from 'react';
import { actionFrame, screenshotPath } from '../../shared/trajectory-frame';
import type { StepRow } from './api';
import { Panel } from './sql-panel';
import { StepNavigation } from './step-navigation';
import type { TrajectoryPanelProps } from './trajectory-panel';

// The `screenshots` trajectory panel: each step's computer-use tool calls (Bytebot's vocabulary,
// `action.tool_calls`) drawn on the frame the agent saw, a filmstrip of every frame.

interface Point {
  x: number;
  y: number;
}

interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

const screenshotUrl = screenshotPath;

function toolCallsOf(step: StepRow): ToolCall[] {
  const calls = step.action?.['tool_calls'];
  if (!Array.isArray(calls)) return [];
  return calls.map((call: unknown) => {
    const record = (call ?? {}) as Record<string, unknown>;
    const input = record['input'];
    return {
      name: String(record['name'] ?? ''),
      input: input && typeof input === 'object' ? (input as Record<string, unknown>) : {},
    };
  });
}

function pointOf(value: unknown): Point | undefined {
  const record = value as Record<string, unknown> | null | undefined;
  return record && typeof record['x'] === 'number' && typeof record['y'] === 'number'
    ? { x: record['x'], y: record['y'] }
    : undefined;
}

/** Where a Bytebot computer tool call acts on the screen: a point, or a path for drags and traces. */
function geometryOf(call: ToolCall): { point?: Point; path?: Point[] } {
  const path = Array.isArray(call.input['path'])
    ? call.input['path'].map(pointOf).filter((p): p is Point => p !== undefined)
    : [];
  if (path.length) return { path };
  const point = pointOf(call.input['coordinates']);
  return point ? { point } : {};
}

function describe(call: ToolCall): string {
  const input = call.input;
  const name = call.name.replace(/^computer_/, '');
  const at = pointOf(input['coordinates']);
  const where = at ? ` at (${at.x}, ${at.y})` : '';
  switch (call.name) {
    case 'computer_click_mouse':
      return `click ${String(input['button'] ?? 'left')} ×${String(input['clickCount'] ?? 1)}${where}`;
    case 'computer_drag_mouse':
    case 'computer_trace_mouse': {
      const path = geometryOf(call).path ?? [];
      return `${name} ${path.map((p) => `(${p.x}, ${p.y})`).join(' → ')}`;
    }
    case 'computer_scroll':
      return `scroll ${String(input['direction'] ?? '')} ×${String(input['scrollCount'] ?? 1)}${where}`;
    case 'computer_type_text':
    case 'computer_paste_text':
      return `${name} ${input['isSensitive'] ? '(sensitive text)' : JSON.stringify(input['text'] ?? '')}`;
    case 'computer_type_keys':
    case 'computer_press_keys':
      return `${name} ${JSON.stringify(input['keys'] ?? [])}`;
    case 'set_task_status':
      return `set_task_status ${String(input['status'] ?? '')}: ${String(input['description'] ?? '')}`;
    default:
      return `${name}${where}${Object.keys(input).length && !at ? ` ${JSON.stringify(input)}` : ''}`;
  }
}

/** A frame with the step's actions drawn on it in the screen's own pixel coordinates. */
function ActionFrame({
  src,
  calls,
  alt,
  onLoaded,
}: {
  src: string;
  calls: ToolCall[];
  alt: string;
  onLoaded: () => void;
}) {
  const [size, setSize] = useState<{ width: number; height: number }>();
  const image = useRef<HTMLImageElement>(null);
  const loaded = (element: HTMLImageElement) => {
    setSize({ width: element.naturalWidth, height: element.naturalHeight });
    onLoaded();
  };
  useEffect(() => {
    setSize(undefined);
    // A frame the page preloaded can be complete before its load listener exists: no event then.
    if (image.current?.complete && image.current.naturalWidth > 0) loaded(image.current);
  }, [src]);
  const marks = calls.map(geometryOf);
  const radius = size ? Math.max(size.width, size.height) / 80 : 0;
  return (
    <div className="frame" data-frame>
      <img
        ref={image}
        src={src}
        alt={alt}
        fetchPriority="high"
        onLoad={(event) => loaded(event.currentTarget)}
        onError={onLoaded}
      />
      {size && (
        <svg
          className="overlay"
          viewBox={`0 0 ${size.width} ${size.height}`}
          preserveAspectRatio="none"
          aria-hidden="true"
        >
          {marks.map((mark, i) =>
            mark.path ? (
              <g key={i} data-action="path">
                <polyline
                  points={mark.path.map((p) => `${p.x},${p.y}`).join(' ')}
                  fill="none"
                  stroke="#ff1744"
                  strokeWidth={radius / 2}
                />
                {mark.path.map((p, j) => (
                  <circle
                    key={j}
                    data-point={`${p.x},${p.y}`}
                    cx={p.x}
                    cy={p.y}
                    r={radius / 1.5}
                    fill="#ff1744"
                  />
                ))}
              </g>
            ) : mark.point ? (
              <g key={i} data-action="point">
                <circle
                  data-point={`${mark.point.x},${mark.point.y}`}
                  cx={mark.point.x}
                  cy={mark.point.y}
                  r={radius}
                  fill="none"
                  stroke="#ff1744"
                  strokeWidth={radius / 3}
                />
                <circle cx={mark.point.x} cy={mark.point.y} r={radius / 4} fill="#ff1744" />
              </g>
            ) : null,
          )}
        </svg>
      )}
    </div>
  );
}

/** Every step's frame as a thumbnail (once `thumbnails` allows), the chosen one kept in view. */
function Filmstrip({
  runId,
  taskId,
  steps,
  index,
  onIndex,
  thumbnails,
}: Omit<TrajectoryPanelProps, 'queries'> & { thumbnails: boolean }) {
  const strip = useRef<HTMLDivElement>(null);
  useEffect(() => {
    strip.current
      ?.querySelector('[aria-current="true"]')
      ?.scrollIntoView({ block: 'nearest', inline: 'center' });
  }, [index]);
  return (
    <div className="filmstrip" ref={strip} data-field="filmstrip">
      {steps.map((s, i) => (
        <button
          key={s.step}
          type="button"
          className="film"
          aria-current={i === index}
          onClick={() => onIndex(i)}
          title={`step ${s.step}`}
        >
          {s.has_screenshot && thumbnails ? (
            <img
              src={screenshotUrl(runId, taskId, s)}
              alt=""
              loading="lazy"
              decoding="async"
              fetchPriority="low"
            />
          ) : (
            <span className="no-shot" />
          )}
          <span className="small">{s.step}</span>
        </button>
      ))}
    </div>
  );
}

export function ScreenshotSteps({
  runId,
  taskId,
  steps,
  index,
  onIndex,
  queries,
}: TrajectoryPanelProps) {
  const step = steps[index];
  // Thumbnails are full screenshots: they wait until the frame in view has been drawn.
  const [frameShown, setFrameShown] = useState(false);
  if (!step) return null;
  const calls = toolCallsOf(step);
  const { frame, seenBefore } = actionFrame(steps, index);
  const seen = seenBefore ? frame : undefined;
  const thumbnails = frameShown || !(seen || step.has_screenshot);
  return (
    <Panel id="steps" title={`Step ${step.step} of ${steps.length}`} queries={queries}>
      <StepNavigation index={index} count={steps.length} onIndex={onIndex} />
      <div className="step-view" data-step={step.step}>
        <figure>
          {seen ? (
            <ActionFrame
              src={screenshotUrl(runId, taskId, seen)}
              calls={calls}
              alt={`screen the agent saw before step ${step.step}`}
              onLoaded={() => setFrameShown(true)}
            />
          ) : step.has_screenshot ? (
            <ActionFrame
              src={screenshotUrl(runId, taskId, step)}
              calls={calls}
              alt={`screen after step ${step.step}`}
              onLoaded={() => setFrameShown(true)}
            />
          ) : (
            <p className="muted">No screenshot for this step.</p>
          )}
          <figcaption className="muted small">
            {seen
              ? `The screen the agent saw (after step ${seen.step}), with this step's action drawn on it.`
              : 'No earlier frame was recorded: the action is drawn on the screen after it.'}
          </figcaption>
        </figure>
        <div className="step-text">
          <h3>Actions</h3>
          <ol className="actions" data-field="actions">
            {calls.map((call, i) => (
              <li key={i}>
                <code>{describe(call)}</code>
              </li>
            ))}
            {calls.length === 0 && <li className="muted">no tool call</li>}
          </ol>
          <h3>Model text</h3>
          <pre className="model-text" data-field="model-text">
            {step.text || '(none)'}
          </pre>
          {seen && step.has_screenshot && frameShown && (
            <>
              <h3>Screen after this step</h3>
              <img
                className="after"
                src={screenshotUrl(runId, taskId, step)}
                alt={`screen after step ${step.step}`}
                loading="lazy"
                decoding="async"
              />
            </>
          )}
          <p className="muted small">
            {new Date(step.at).toLocaleTimeString()} · {step.tokens_in} tokens in /{' '}
            {step.tokens_out} out{step.latency_ms !== null ? ` · ${step.latency_ms} ms` : ''}
          </p>
        </div>
      </div>
      <Filmstrip
        runId={runId}
        taskId={taskId}
        steps={steps}
        index={index}
        onIndex={onIndex}
        thumbnails={thumbnails}
      />
    </Panel>
  );
}
