import type { Attempt, Run, Step, Task, TimedStep } from '@benchfleet/db';
import type { AtifModelInputCall } from './atif-model-inputs.js';
import {
  ATIF_SCHEMA_VERSION,
  type AtifContentPart,
  type AtifImageMediaType,
  type AtifObservationResult,
  type AtifStep,
  type AtifToolCall,
  type AtifTrajectory,
} from './atif-schema.js';

// One task attempt of any benchmark as an ATIF trajectory, from the generic rows alone (run, task,
// attempt, steps). The mapping, written down once:
// - step 1 is a `user` step: the task's instruction, at the attempt's start;
// - every recorded step is one `agent` step, in step order (ids renumbered from 2, the recorded
//   number kept in extra), stamped with its recorded time to the microsecond: its text is the
//   message; its action JSON gives the tool calls (an action with a `tool_calls` array of
//   `{name, input}` is those calls; an action record whose `action` is a bracketed action,
//   `search[red shirt]`, is one call named by its word, `search`, with its argument, `{query}`;
//   any other action object is one call named `action` whose arguments are that object); its
//   observation text and screenshot (an image file of the export) are one observation result,
//   tied to the tool call when there is exactly one; its tokens and cost are the step's metrics,
//   left out when nothing is known of them (no tokens and no cost recorded);
// - a run with no model uses no LLM (WebShop's rule agent): a step of it that spent nothing is a
//   deterministic dispatch, `llm_call_count: 0` and no metrics, and no token totals are written;
// - final_metrics has the attempt's own spend: tokens and cost of every call it made, relayed
//   calls no step claims included (each attempt keeps its spend; the task's is the sum over its
//   attempts; an attempt whose spend was never recorded has its steps' sum); tokens left out when
//   none were recorded and the cost is not known;
// - the task's reward (final attempt only) is at `extra.reward` and `final_metrics.extra.reward`,
//   where a reader of Harbor's results looks for a trial's reward, as well as in the outcome;
// - what ATIF has no field for (the outcome, rewards, ids, raw actions, timings) is under
//   `extra.benchfleet` at each level.

/** The key of benchfleet's own data in ATIF `extra` objects. */
const ATIF_EXTENSION_KEY = 'benchfleet';

/** A step's screenshot as the export holds it: an image file beside the trajectory, or why there is none. */
export type AtifScreenshot =
  | { readonly uri: string; readonly path: string; readonly mediaType: AtifImageMediaType }
  | { readonly uri: string; readonly missing: string };

export interface AttemptRecords {
  readonly run: Run;
  readonly task: Task;
  readonly attempt: Attempt;
  /** The attempt's steps, in step order. */
  readonly steps: readonly TimedStep[];
  /** By recorded step number, for the steps that have a screenshot URI. */
  readonly screenshots: ReadonlyMap<number, AtifScreenshot>;
  /**
   * The attempt's latest grade, in a graded run (null: none recorded); absent for a run that is
   * not graded, whose trajectories stay as they were.
   */
  readonly grade?: Record<string, unknown> | null;
  /** The attempt's LLM calls' inputs by step (null: calls no step claimed), when stored. */
  readonly modelInputs?: ReadonlyMap<number | null, readonly AtifModelInputCall[]>;
}

/** Whether the task has its outcome (queued and running tasks do not). */
export function taskHasOutcome(task: Task): boolean {
  return task.status !== 'queued' && task.status !== 'running';
}

/** The attempt whose end is the task's outcome: the last one of a task that has an outcome. */
export function isFinalAttempt(task: Task, attempt: Attempt): boolean {
  return taskHasOutcome(task) && attempt.attempt === task.attempts;
}

/** The id of an attempt's trajectory: the job id of its task, and the attempt number. */
function atifTrajectoryId(runId: string, taskId: string, attempt: number): string {
  return `${runId}__${taskId}__attempt-${attempt}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(record: unknown, key: string): string | undefined {
  return isRecord(record) && typeof record[key] === 'string' ? record[key] : undefined;
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** `word[argument]`, the form of a WebShop action. */
const BRACKETED_ACTION = /^\s*([A-Za-z_][\w-]*)\s*\[(.*)\]\s*$/s;

/** What a bracketed action's argument is called: a search's query, a click's target. */
const ARGUMENT_NAMES: Readonly<Record<string, string>> = { search: 'query', click: 'target' };

/** A recorded action record `{action: 'search[red shirt]', …}` as the call the agent made; null for any other shape. */
function bracketedCall(action: Record<string, unknown>): { name: string; argument: string } | null {
  const text = action['action'];
  if (typeof text !== 'string') return null;
  const match = BRACKETED_ACTION.exec(text);
  return match ? { name: match[1]!.toLowerCase(), argument: match[2]!.trim() } : null;
}

/** The tool calls an action JSON stands for (see the mapping above). */
export function atifToolCallsOf(stepNumber: number, action: unknown): AtifToolCall[] {
  if (!isRecord(action)) return [];
  const calls = action['tool_calls'];
  const taken = new Set<string>();
  const idFor = (index: number, own: unknown): string => {
    const id =
      typeof own === 'string' && own !== '' && !taken.has(own)
        ? own
        : `step-${stepNumber}-call-${index + 1}`;
    taken.add(id);
    return id;
  };
  if (!Array.isArray(calls)) {
    const bracketed = bracketedCall(action);
    if (bracketed === null)
      return [{ tool_call_id: idFor(0, undefined), function_name: 'action', arguments: action }];
    // The whole record (validity, thought, what was available) stays in the step's extra.
    return [
      {
        tool_call_id: idFor(0, undefined),
        function_name: bracketed.name,
        arguments: { [ARGUMENT_NAMES[bracketed.name] ?? 'argument']: bracketed.argument },
      },
    ];
  }
  return calls.map((call, index) => {
    const fields: Record<string, unknown> = isRecord(call) ? call : { input: call };
    const { name, input, id, ...rest } = fields;
    return {
      tool_call_id: idFor(index, id),
      function_name: typeof name === 'string' ? name : '',
      // ATIF arguments are an object: any other input is kept whole under `input`.
      arguments: isRecord(input) ? input : input === undefined ? {} : { input },
      ...(Object.keys(rest).length > 0 ? { extra: { [ATIF_EXTENSION_KEY]: rest } } : {}),
    };
  });
}

/** A step's metrics: what was recorded of its calls; undefined when nothing was (unknown, not 0). */
function stepMetricsOf(step: Step): AtifStep['metrics'] {
  const tokensKnown = step.tokens_in + step.tokens_out > 0;
  if (!tokensKnown && step.cost_usd === null) return undefined;
  return {
    ...(tokensKnown ? { prompt_tokens: step.tokens_in, completion_tokens: step.tokens_out } : {}),
    ...(step.cost_usd !== null ? { cost_usd: step.cost_usd } : {}),
  };
}

function observationOf(
  step: Step,
  toolCalls: readonly AtifToolCall[],
  screenshot: AtifScreenshot | undefined,
): AtifStep['observation'] {
  const image = screenshot && 'path' in screenshot ? screenshot : undefined;
  if (step.observation === null && image === undefined) return undefined;
  const content: string | AtifContentPart[] =
    image === undefined
      ? (step.observation ?? '')
      : [
          ...(step.observation === null ? [] : [{ type: 'text' as const, text: step.observation }]),
          { type: 'image' as const, source: { media_type: image.mediaType, path: image.path } },
        ];
  const result: AtifObservationResult = {
    ...(toolCalls.length === 1 ? { source_call_id: toolCalls[0]!.tool_call_id } : {}),
    content,
  };
  return { results: [result] };
}

/** Whether the run's agent calls an LLM: a run records its model only when it does. */
function usesLlm(run: Run): boolean {
  return run.model !== null;
}

/** A step of an agent without an LLM that spent nothing: a deterministic dispatch (ATIF v1.7). */
function isDispatch(step: Step, llm: boolean): boolean {
  return (
    !llm && step.tokens_in + step.tokens_out === 0 && !(step.cost_usd !== null && step.cost_usd > 0)
  );
}

function agentStep(
  stepId: number,
  step: TimedStep,
  screenshot: AtifScreenshot | undefined,
  llm: boolean,
  modelInput: readonly AtifModelInputCall[] | undefined,
): AtifStep {
  const toolCalls = atifToolCallsOf(step.step, step.action);
  const observation = observationOf(step, toolCalls, screenshot);
  const dispatch = isDispatch(step, llm);
  const metrics = dispatch ? undefined : stepMetricsOf(step);
  return {
    step_id: stepId,
    timestamp: step.at_iso,
    source: 'agent',
    message: step.text ?? '',
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    ...(observation ? { observation } : {}),
    ...(metrics ? { metrics } : {}),
    // A deterministic dispatch (ATIF v1.7): no inference, so no metrics either.
    ...(dispatch ? { llm_call_count: 0 } : {}),
    extra: {
      [ATIF_EXTENSION_KEY]: {
        step: step.step,
        action: step.action,
        reward: step.reward,
        external_id: step.external_id,
        latency_ms: step.latency_ms,
        screenshot:
          screenshot === undefined
            ? null
            : 'path' in screenshot
              ? { uri: screenshot.uri, file: screenshot.path }
              : { uri: screenshot.uri, missing: screenshot.missing },
        ...(modelInput !== undefined && { model_input: { calls: modelInput } }),
      },
    },
  };
}

/** The task's outcome, recorded with its final attempt: the one `extra` block that says how it ended. */
function outcomeOf(task: Task): Record<string, unknown> {
  return {
    status: task.status,
    success: task.success,
    reward: task.reward,
    // `tasks.result.stop_reason` is the fleet-wide convention every benchmark's display explains.
    stop_reason: stringField(task.result, 'stop_reason') ?? null,
    final_api_status: task.final_api_status,
    answer: task.answer,
    error: task.error,
    total_steps: task.total_steps,
    duration_ms: task.duration_ms,
    tokens_in: task.tokens_in,
    tokens_out: task.tokens_out,
    cost_usd: task.cost_usd,
    started_at: iso(task.started_at),
    finished_at: iso(task.finished_at),
    result: task.result ?? null,
  };
}

/** The agent system: the run's agent record names it (`name`, else `kind`), its model the default model. */
function agentOf(run: Run): AtifTrajectory['agent'] {
  const agentVersion = stringField(run.agent, 'version');
  const modelName = stringField(run.model, 'name');
  return {
    name: stringField(run.agent, 'name') ?? stringField(run.agent, 'kind') ?? run.benchmark,
    version: agentVersion ?? run.code_version,
    ...(modelName !== undefined ? { model_name: modelName } : {}),
    extra: {
      [ATIF_EXTENSION_KEY]: {
        agent: run.agent,
        model: run.model,
        version_is:
          agentVersion !== undefined ? 'the agent version' : 'the benchfleet code version',
      },
    },
  };
}

function sumOf<T>(rows: readonly T[], value: (row: T) => number): number {
  return rows.reduce((sum, row) => sum + value(row), 0);
}

/**
 * The attempt's tokens, every call it made (relayed calls no step claims included). An attempt
 * whose spend was never recorded (a lost worker) has its steps' sum, the most that is known. Left
 * out when there are none to count: no LLM, or nothing recorded and no known cost.
 */
function attemptTokensOf(
  attempt: Attempt,
  steps: readonly Step[],
  llm: boolean,
): { total_prompt_tokens?: number; total_completion_tokens?: number } {
  const prompt = Math.max(
    attempt.tokens_in,
    sumOf(steps, (step) => step.tokens_in),
  );
  const completion = Math.max(
    attempt.tokens_out,
    sumOf(steps, (step) => step.tokens_out),
  );
  if (prompt + completion === 0 && (!llm || attempt.cost_usd === null)) return {};
  return { total_prompt_tokens: prompt, total_completion_tokens: completion };
}

/** One attempt of one task as an ATIF-v1.7 trajectory (see the mapping at the top of this file). */
export function atifTrajectoryOfAttempt(records: AttemptRecords): AtifTrajectory {
  const { run, task, attempt, steps } = records;
  const final = isFinalAttempt(task, attempt);
  const llm = usesLlm(run);
  const id = atifTrajectoryId(run.id, task.task_id, attempt.attempt);
  const atifSteps: AtifStep[] = [
    {
      step_id: 1,
      timestamp: attempt.started_at.toISOString(),
      source: 'user',
      message: task.instruction,
    },
    ...steps.map((step, index) =>
      agentStep(
        index + 2,
        step,
        records.screenshots.get(step.step),
        llm,
        records.modelInputs?.get(step.step),
      ),
    ),
  ];
  const reward = final ? task.reward : null;
  return {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: id,
    trajectory_id: id,
    agent: agentOf(run),
    steps: atifSteps,
    notes:
      `Exported by benchfleet: run ${run.id} (${run.benchmark}), task ${task.task_id}, attempt ${attempt.attempt}` +
      `${final ? ' (the final attempt: extra.benchfleet.outcome is the task outcome)' : ' (not the final attempt)'}. ` +
      'Step 1 is the task instruction; each later step is one recorded step (its number in extra.benchfleet.step). ' +
      'total_steps counts the steps array.',
    final_metrics: {
      ...attemptTokensOf(attempt, steps, llm),
      ...(attempt.cost_usd !== null ? { total_cost_usd: attempt.cost_usd } : {}),
      total_steps: atifSteps.length,
      extra: {
        ...(reward !== null ? { reward } : {}),
        [ATIF_EXTENSION_KEY]: {
          recorded_steps: steps.length,
          // The rest of the totals is calls no step claimed (OSWorld's relayed calls between steps).
          steps_prompt_tokens: sumOf(steps, (step) => step.tokens_in),
          steps_completion_tokens: sumOf(steps, (step) => step.tokens_out),
          ...(records.modelInputs?.has(null) && {
            unclaimed_model_inputs: records.modelInputs.get(null),
          }),
        },
      },
    },
    extra: {
      ...(reward !== null ? { reward } : {}),
      [ATIF_EXTENSION_KEY]: benchfleetExtraOf(records, final),
    },
  };
}

/** The trajectory's own `extra.benchfleet`: the run, the task, the attempt, and the task's outcome on its final attempt. */
function benchfleetExtraOf(records: AttemptRecords, final: boolean): Record<string, unknown> {
  const { run, task, attempt } = records;
  return {
    run: {
      id: run.id,
      name: run.name,
      benchmark: run.benchmark,
      epochs: run.epochs,
      code_version: run.code_version,
      config: run.config,
    },
    task: {
      task_id: task.task_id,
      base_task_id: task.base_task_id,
      epoch: task.epoch,
      domain: task.domain,
      attempts: task.attempts,
    },
    attempt: {
      attempt: attempt.attempt,
      final,
      status: attempt.status,
      error_class: attempt.error_class,
      error: attempt.error,
      worker_id: attempt.worker_id,
      job_attempt: attempt.job_attempt,
      external_id: attempt.external_id,
      started_at: iso(attempt.started_at),
      finished_at: iso(attempt.finished_at),
      duration_ms:
        attempt.finished_at === null
          ? null
          : attempt.finished_at.getTime() - attempt.started_at.getTime(),
    },
    outcome: final ? outcomeOf(task) : null,
    // A graded run: the grade of this attempt's end state, beside the agent's word (outcome).
    ...(records.grade !== undefined ? { grade: records.grade } : {}),
  };
}
