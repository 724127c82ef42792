// Binds a metric call `metric(*args, **options)` to the upstream function's Python signature, with
// the TypeErrors Python raises for a missing, unexpected or doubled argument.
import { PyDict, toPy, type PyValue } from './python-data.js';
import { PythonException } from './python-value.js';

export interface PythonSignature {
  readonly name: string;
  /** Positional-or-keyword parameters, in order. */
  readonly parameters: readonly string[];
  /** Defaults of the trailing parameters that have one. */
  readonly defaults?: Readonly<Record<string, PyValue>>;
  /** Whether the function takes `**options`. */
  readonly varKeywords?: boolean;
}

export interface BoundCall {
  /** One value per parameter, in order. */
  readonly values: readonly PyValue[];
  /** What `**options` received. */
  readonly options: PyDict;
}

/** Python's argument binding for `signature` called with `args` and keyword `options`. */
export function bindPythonCall(
  signature: PythonSignature,
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
): BoundCall {
  const { name, parameters } = signature;
  if (args.length > parameters.length) {
    const takes = parameters.length;
    throw new PythonException(
      'TypeError',
      `${name}() takes ${takes} positional argument${takes === 1 ? '' : 's'} but ${args.length} were given`,
    );
  }
  const values = new Map<string, PyValue>();
  args.forEach((arg, index) => values.set(parameters[index] as string, toPy(arg)));
  const extra = new PyDict();
  for (const [key, value] of Object.entries(options)) {
    if (parameters.includes(key)) {
      if (values.has(key)) {
        throw new PythonException(
          'TypeError',
          `${name}() got multiple values for argument '${key}'`,
        );
      }
      values.set(key, toPy(value));
    } else if (signature.varKeywords) {
      extra.set(key, toPy(value));
    } else {
      throw new PythonException(
        'TypeError',
        `${name}() got an unexpected keyword argument '${key}'`,
      );
    }
  }
  const missing = parameters.filter(
    (parameter) => !values.has(parameter) && signature.defaults?.[parameter] === undefined,
  );
  if (missing.length > 0) {
    const quoted = missing.map((parameter) => `'${parameter}'`);
    const list =
      quoted.length === 1
        ? (quoted[0] as string)
        : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
    throw new PythonException(
      'TypeError',
      `${name}() missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${list}`,
    );
  }
  return {
    values: parameters.map(
      (parameter) => values.get(parameter) ?? signature.defaults?.[parameter] ?? null,
    ),
    options: extra,
  };
}
