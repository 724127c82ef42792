import type { MetricContext, MetricFunction } from '../metrics/metric-function.js';
import { pyGetItemOfJson, pyLen, pyToFloat } from '../python/builtins.js';
import { pyKeywordArguments } from '../python/call-binding.js';
import { pyCompare } from '../python/equality.js';
import { PythonException } from '../python/exceptions.js';
import { pyFloat, pyInt, pyTruthy, toPy, type PythonValue } from '../python/values.js';

// DesktopEnv._set_evaluator_info + DesktopEnv.evaluate (reference §5), step for step, with
// Python's evaluation order where it decides which exception escapes. Golden cases:
// shared/osworld/grading/metric-fixtures/_evaluate.json.

export interface GetterSlot {
  readonly side: 'result' | 'expected';
  /** The metric's index for a list `func`; null for a single metric. */
  readonly index: number | null;
}

export type EvaluateEvent =
  | { readonly kind: 'postconfig'; readonly steps: number }
  | {
      readonly kind: 'getter';
      readonly slot: GetterSlot;
      readonly type: string;
      readonly config: unknown;
      readonly output?: unknown;
      readonly raised?: { readonly type: string; readonly message: string };
    }
  | {
      readonly kind: 'metric';
      readonly index: number | null;
      readonly name: string;
      readonly args: readonly unknown[];
      readonly options: unknown;
      readonly value?: PythonValue;
      readonly raised?: { readonly type: string; readonly message: string };
    };

/** What evaluate() calls out to: the setup controller, the getters and the metrics. */
export interface EvaluateHooks {
  runPostconfig(steps: unknown): Promise<void>;
  hasGetter(type: string): boolean;
  runGetter(type: string, config: unknown, slot: GetterSlot): Promise<unknown>;
  /** The ported metric by upstream name; `infeasible` never needs one. */
  findMetric(name: string): MetricFunction | undefined;
  readonly metricContext: MetricContext;
}

/** `'infeasible'` is a function of upstream's metrics module that evaluate() never calls. */
const INFEASIBLE = 'infeasible';

type Getter = { readonly type: string } | null;
type Metric = { readonly name: string; readonly run: MetricFunction | null };

interface EvaluatorInfo {
  readonly evaluator: Readonly<Record<string, unknown>>;
  readonly metric: Metric | Metric[];
  readonly conj: unknown;
  /** A getter, None, a list of them, or a non-list non-getter that only fails when used. */
  readonly resultGetter: Getter | Getter[];
  readonly expectedGetter: Getter | Getter[];
  readonly options: unknown;
}

/** The action history's last entry is OSWorld's FAIL, as a string or `{action_type: "FAIL"}`. */
export function lastActionIsFail(actionHistory: readonly unknown[]): boolean {
  const last = actionHistory.at(-1);
  if (last === 'FAIL') return true;
  return (
    typeof last === 'object' &&
    last !== null &&
    !Array.isArray(last) &&
    (last as Record<string, unknown>)['action_type'] === 'FAIL'
  );
}

/**
 * Scores a task as upstream's `evaluate()` does and returns the value it returns, Python type kept.
 * Throws PythonException where upstream raises (the task then has no score); errors of the hooks
 * (infra) pass through. `trace` receives postconfig, getter and metric calls as they happen.
 */
export async function evaluateOsworld(
  evaluatorSpec: unknown,
  actionHistory: readonly unknown[],
  hooks: EvaluateHooks,
  trace: EvaluateEvent[] = [],
): Promise<PythonValue> {
  // Upstream parses at reset; a parse error therefore precedes postconfig.
  const info = setEvaluatorInfo(evaluatorSpec, hooks);
  const { evaluator } = info;

  const postconfig = 'postconfig' in evaluator ? evaluator['postconfig'] : [];
  await hooks.runPostconfig(postconfig);
  trace.push({ kind: 'postconfig', steps: Array.isArray(postconfig) ? postconfig.length : 0 });

  if (evaluator['func'] === INFEASIBLE) return pyInt(lastActionIsFail(actionHistory) ? 1 : 0);
  if (lastActionIsFail(actionHistory)) return pyInt(0);

  const hasExpected =
    'expected' in evaluator &&
    pythonTruthyGetter(info.expectedGetter) &&
    isTruthy(evaluator['expected']);

  if (Array.isArray(info.metric)) {
    const metrics = info.metric;
    const results: PythonValue[] = [];
    let resultState: { value: unknown } | undefined;
    for (const [index, metric] of metrics.entries()) {
      try {
        const config = item(keyOf(evaluator, 'result'), index);
        resultState = {
          value: await callGetter(
            listItem(info.resultGetter, index),
            config,
            { side: 'result', index },
            hooks,
            trace,
          ),
        };
      } catch (error) {
        if (!(error instanceof PythonException && error.type === 'FileNotFoundError')) throw error;
        // Under `and` a missing file scores 0; otherwise the previous result is reused (quirk).
        if (info.conj === 'and') return pyInt(0);
      }
      let args: unknown[];
      if (hasExpected) {
        const getter = listItem(info.expectedGetter, index);
        const config = item(evaluator['expected'], index);
        const expected = await callGetter(
          getter,
          config,
          { side: 'expected', index },
          hooks,
          trace,
        );
        args = [boundResult(resultState), expected];
      } else {
        args = [boundResult(resultState)];
      }
      const options = item(info.options, index);
      const value = await callMetric(metric, args, options, index, hooks, trace);
      if (info.conj === 'and' && pyToFloat(value.value) === 0) return pyInt(0);
      if (info.conj === 'or' && pyToFloat(value.value) === 1) return pyInt(1);
      results.push(value);
    }
    return info.conj === 'and' ? pythonMean(results) : pythonMax(results);
  }

  let resultState: unknown;
  try {
    const getter = info.resultGetter;
    const config = keyOf(evaluator, 'result');
    resultState = await callGetter(getter, config, { side: 'result', index: null }, hooks, trace);
  } catch (error) {
    if (error instanceof PythonException && error.type === 'FileNotFoundError') return pyInt(0);
    throw error;
  }
  let args: unknown[];
  if (hasExpected) {
    const expected = await callGetter(
      info.expectedGetter,
      evaluator['expected'],
      { side: 'expected', index: null },
      hooks,
      trace,
    );
    args = [resultState, expected];
  } else {
    args = [resultState];
  }
  return callMetric(info.metric, args, info.options, null, hooks, trace);
}

function setEvaluatorInfo(spec: unknown, hooks: EvaluateHooks): EvaluatorInfo {
  // evaluator["func"] is the first subscript: it raises Python's error for anything but a dict.
  const func = keyOf(spec, 'func');
  const evaluator = spec as Readonly<Record<string, unknown>>;
  const metric = Array.isArray(func)
    ? func.map((name) => metricNamed(name, hooks))
    : metricNamed(func, hooks);
  const conj = 'conj' in evaluator ? evaluator['conj'] : 'and';
  const metricCount = Array.isArray(metric) ? metric.length : 0;

  const getterOf = (config: unknown): Getter => {
    const type = keyOf(config, 'type');
    if (typeof type !== 'string' || !hooks.hasGetter(type))
      throw new PythonException(
        'AttributeError',
        `module 'desktop_env.evaluators.getters' has no attribute 'get_${String(type)}'`,
      );
    return { type };
  };
  const resultGetter =
    'result' in evaluator && pythonLen(evaluator['result']) > 0
      ? Array.isArray(evaluator['result'])
        ? evaluator['result'].map(getterOf)
        : getterOf(evaluator['result'])
      : Array.isArray(metric)
        ? Array.from({ length: metricCount }, () => null)
        : null;
  const expectedGetter =
    'expected' in evaluator && pythonLen(evaluator['expected']) > 0
      ? Array.isArray(evaluator['expected'])
        ? evaluator['expected'].map((config: unknown) =>
            isTruthy(config) ? getterOf(config) : null,
          )
        : getterOf(evaluator['expected'])
      : Array.isArray(metric)
        ? Array.from({ length: metricCount }, () => null)
        : null;
  const rawOptions = 'options' in evaluator ? evaluator['options'] : {};
  const options = Array.isArray(rawOptions)
    ? rawOptions.map((option: unknown) => (isTruthy(option) ? option : {}))
    : 'options' in evaluator
      ? rawOptions
      : Array.isArray(metric)
        ? Array.from({ length: metricCount }, () => ({}))
        : {};

  // `len(metric) == len(result_getter) == len(expected_getter) == len(options)`, chained: each
  // len() is taken only while the comparisons before it held.
  if (Array.isArray(func)) {
    const lengths = [
      () => getterListLength(resultGetter),
      () => getterListLength(expectedGetter),
      () => pythonLen(options),
    ];
    for (const length of lengths)
      if (length() !== metricCount) throw new PythonException('AssertionError', '');
  }
  return { evaluator, metric, conj, resultGetter, expectedGetter, options };
}

function metricNamed(name: unknown, hooks: EvaluateHooks): Metric {
  if (typeof name !== 'string')
    throw new PythonException('TypeError', 'attribute name must be string');
  if (name === INFEASIBLE) return { name, run: null };
  const run = hooks.findMetric(name);
  if (!run)
    throw new PythonException(
      'AttributeError',
      `module 'desktop_env.evaluators.metrics' has no attribute '${name}'`,
    );
  return { name, run };
}

async function callGetter(
  getter: Getter | Getter[],
  config: unknown,
  slot: GetterSlot,
  hooks: EvaluateHooks,
  trace: EvaluateEvent[],
): Promise<unknown> {
  if (getter === null) throw new PythonException('TypeError', "'NoneType' object is not callable");
  if (Array.isArray(getter))
    throw new PythonException('TypeError', "'list' object is not callable");
  try {
    const output = await hooks.runGetter(getter.type, config, slot);
    trace.push({ kind: 'getter', slot, type: getter.type, config, output });
    return output;
  } catch (error) {
    if (error instanceof PythonException)
      trace.push({
        kind: 'getter',
        slot,
        type: getter.type,
        config,
        raised: { type: error.type, message: error.message },
      });
    throw error;
  }
}

async function callMetric(
  metric: Metric | Metric[],
  args: unknown[],
  options: unknown,
  index: number | null,
  hooks: EvaluateHooks,
  trace: EvaluateEvent[],
): Promise<PythonValue> {
  if (Array.isArray(metric))
    throw new PythonException('TypeError', "'list' object is not callable");
  const keywordOptions = pyKeywordArguments(metric.name, options);
  if (metric.run === null)
    throw new PythonException(
      'TypeError',
      `${metric.name}() takes 0 positional arguments but ${args.length} were given`,
    );
  try {
    const value = await metric.run(args, keywordOptions, hooks.metricContext);
    trace.push({ kind: 'metric', index, name: metric.name, args, options: keywordOptions, value });
    return value;
  } catch (error) {
    if (error instanceof PythonException)
      trace.push({
        kind: 'metric',
        index,
        name: metric.name,
        args,
        options: keywordOptions,
        raised: { type: error.type, message: error.message },
      });
    throw error;
  }
}

/** `result_state` after a swallowed FileNotFoundError on the first metric was never bound. */
function boundResult(state: { value: unknown } | undefined): unknown {
  if (state === undefined)
    throw new PythonException(
      'UnboundLocalError',
      "cannot access local variable 'result_state' where it is not associated with a value",
    );
  return state.value;
}

/** `sum(results) / len(results)`: true division, always a float. */
function pythonMean(results: readonly PythonValue[]): PythonValue {
  if (results.length === 0) throw new PythonException('ZeroDivisionError', 'division by zero');
  let sum = 0;
  for (const value of results) {
    if (value.type === 'str' || value.type === 'NoneType')
      throw new PythonException(
        'TypeError',
        `unsupported operand type(s) for +: 'int' and '${value.type}'`,
      );
    sum += pyToFloat(value.value);
  }
  return pyFloat(sum / results.length);
}

/** `max(results)`: the first of the largest, its type kept. */
function pythonMax(results: readonly PythonValue[]): PythonValue {
  const [first, ...rest] = results;
  if (first === undefined)
    throw new PythonException('ValueError', 'max() arg is an empty sequence');
  let best = first;
  for (const value of rest) if (pythonGreater(value, best)) best = value;
  return best;
}

function pythonGreater(left: PythonValue, right: PythonValue): boolean {
  const numeric = (value: PythonValue) =>
    value.type === 'float' || value.type === 'int' || value.type === 'bool';
  if ((numeric(left) && numeric(right)) || (left.type === 'str' && right.type === 'str'))
    return pyCompare('>', left.value, right.value);
  throw new PythonException(
    'TypeError',
    `'>' not supported between instances of '${left.type}' and '${right.type}'`,
  );
}

/** `value[name]` on the task's evaluator dict. */
const keyOf = (value: unknown, name: string): unknown => pyGetItemOfJson(value, name);

/** `sequence[index]` for a list of the evaluator (a dict's keys are strings: KeyError). */
const item = (container: unknown, index: number): unknown => pyGetItemOfJson(container, index);

function listItem(getters: Getter | Getter[], index: number): Getter {
  if (!Array.isArray(getters))
    throw new PythonException('TypeError', "'function' object is not subscriptable");
  const getter = getters[index];
  if (getter === undefined) throw new PythonException('IndexError', 'list index out of range');
  return getter;
}

function getterListLength(getters: Getter | Getter[]): number {
  if (Array.isArray(getters)) return getters.length;
  throw new PythonException(
    'TypeError',
    `object of type '${getters === null ? 'NoneType' : 'function'}' has no len()`,
  );
}

function pythonTruthyGetter(getters: Getter | Getter[]): boolean {
  return Array.isArray(getters) ? getters.length > 0 : getters !== null;
}

/** Python's `len()` and truthiness of a JSON value of the evaluator. */
const pythonLen = (value: unknown): number => pyLen(toPy(value));
const isTruthy = (value: unknown): boolean => pyTruthy(toPy(value));
