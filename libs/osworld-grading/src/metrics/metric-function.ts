import { bindPythonCall, type PythonSignature } from '../python/call-binding.js';
import { pyFloat, type PyDict, type PythonValue, type PyValue } from '../python/values.js';
import type { PythonRunner } from '../python-runners/python-runner.js';

export interface MetricContext {
  /** The per-attempt cache directory the getters wrote into (absolute). */
  readonly cacheDir: string;
  readonly python?: PythonRunner;
}

/**
 * One OSWorld metric function, ported. `args` are what the getters returned, positionally (a file
 * getter gives an absolute path in `cacheDir`, a list of them, or null); `options` are the task's
 * keyword arguments unchanged. It returns what the Python function returned, type included, or
 * throws `PythonException` where the Python function raises.
 */
export type MetricFunction = (
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
  context: MetricContext,
) => PythonValue | Promise<PythonValue>;

export interface PortedMetric {
  readonly name: string;
  readonly run: MetricFunction;
  /**
   * 0 for metrics that must match the original exactly; otherwise the largest absolute difference
   * from the original's score we accept, with the reason (a different PDF text extractor…).
   */
  readonly tolerance: { readonly abs: number; readonly why: string } | 0;
}

/** A metric's float score for a comparison: 1.0 or 0.0. */
export const scoreOf = (passed: boolean): PythonValue => pyFloat(passed ? 1 : 0);

/**
 * A ported metric from its upstream Python signature and its body: the call is bound as Python
 * binds it (TypeError for a bad call), the body gets one PyValue per parameter and `**options`.
 */
export function portedMetric<const P extends readonly string[]>(
  signature: PythonSignature & { readonly parameters: P },
  run: (
    values: { readonly [K in keyof P]: PyValue },
    options: PyDict,
    context: MetricContext,
  ) => PythonValue | Promise<PythonValue>,
  tolerance: PortedMetric['tolerance'] = 0,
): PortedMetric {
  return {
    name: signature.name,
    tolerance,
    run: async (args, options, context) => {
      const bound = bindPythonCall(signature, args, options);
      return run(bound.values as { readonly [K in keyof P]: PyValue }, bound.options, context);
    },
  };
}
