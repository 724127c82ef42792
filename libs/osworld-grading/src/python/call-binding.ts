// Python's argument binding, `f(*args, **options)` against a function's signature, with the
// TypeErrors Python raises for a missing, unexpected or doubled argument or a `**` that is no mapping.
import { PyDict, pyTypeName, toPy, type PyValue } from './values.js';
import { PythonException } from './exceptions.js';

export interface PythonSignature {
  readonly name: string;
  /** Positional-or-keyword parameters, in order. */
  readonly parameters: readonly string[];
  /** Defaults of the trailing parameters that have one. */
  readonly defaults?: Readonly<Record<string, PyValue>>;
  /** Whether the function takes `**options`. */
  readonly varKeywords?: boolean;
}

export interface BoundArguments {
  /** One value per parameter, in order, as the caller gave it (or the default). */
  readonly values: readonly unknown[];
  /** What `**options` received, in the caller's order. */
  readonly options: ReadonlyArray<readonly [string, unknown]>;
}

export interface BoundCall {
  /** One value per parameter, in order. */
  readonly values: readonly PyValue[];
  /** What `**options` received. */
  readonly options: PyDict;
}

/** Python's "'a', 'b', and 'c'" listing of parameter names. */
function listNames(names: readonly string[]): string {
  const quoted = names.map((name) => `'${name}'`);
  if (quoted.length === 1) return quoted[0] as string;
  if (quoted.length === 2) return `${quoted[0]} and ${quoted[1]}`;
  return `${quoted.slice(0, -1).join(', ')}, and ${quoted[quoted.length - 1]}`;
}

/** Python's binding of `name(*args, **options)` to `signature`; the values are left as given. */
export function bindArguments(
  signature: PythonSignature,
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
): BoundArguments {
  const { name, parameters } = signature;
  const hasDefault = (parameter: string): boolean => signature.defaults?.[parameter] !== undefined;
  if (args.length > parameters.length) {
    const most = parameters.length;
    const least = parameters.filter((parameter) => !hasDefault(parameter)).length;
    const takes = least === most ? `${most}` : `from ${least} to ${most}`;
    throw new PythonException(
      'TypeError',
      `${name}() takes ${takes} positional argument${most === 1 ? '' : 's'} but ${args.length} were given`,
    );
  }
  const values = new Map<string, unknown>();
  args.forEach((arg, index) => values.set(parameters[index] as string, arg));
  const extra: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(options)) {
    if (parameters.includes(key)) {
      if (values.has(key)) {
        throw new PythonException(
          'TypeError',
          `${name}() got multiple values for argument '${key}'`,
        );
      }
      values.set(key, value);
    } else if (signature.varKeywords) {
      extra.push([key, value]);
    } else {
      throw new PythonException(
        'TypeError',
        `${name}() got an unexpected keyword argument '${key}'`,
      );
    }
  }
  const missing = parameters.filter(
    (parameter) => !values.has(parameter) && !hasDefault(parameter),
  );
  if (missing.length > 0) {
    throw new PythonException(
      'TypeError',
      `${name}() missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${listNames(missing)}`,
    );
  }
  return {
    values: parameters.map((parameter) =>
      values.has(parameter) ? values.get(parameter) : (signature.defaults?.[parameter] ?? null),
    ),
    options: extra,
  };
}

/** Python's binding of a metric call, values as PyValues (dicts as PyDict). */
export function bindPythonCall(
  signature: PythonSignature,
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
): BoundCall {
  const bound = bindArguments(signature, args, options);
  return {
    values: bound.values.map(toPy),
    options: PyDict.fromEntries(bound.options.map(([key, value]) => [key, toPy(value)])),
  };
}

/** `name(**value)` with a JSON value: its keyword arguments, or the TypeError for a non-mapping. */
export function pyKeywordArguments(
  functionName: string,
  value: unknown,
): Readonly<Record<string, unknown>> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return value as Readonly<Record<string, unknown>>;
  }
  throw new PythonException(
    'TypeError',
    `${functionName}() argument after ** must be a mapping, not ${pyTypeName(toPy(value))}`,
  );
}
