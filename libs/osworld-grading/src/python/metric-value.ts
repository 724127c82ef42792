// What an OSWorld metric returned, with Python's type kept: 1, 1.0 and True are different grades.

export type PythonType = 'float' | 'int' | 'bool' | 'NoneType' | 'str';

export type PythonValue =
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'NoneType'; readonly value: null }
  | { readonly type: 'str'; readonly value: string };

export const pyFloat = (value: number): PythonValue => ({ type: 'float', value });
export const pyInt = (value: number): PythonValue => ({ type: 'int', value: Math.trunc(value) });
export const pyBool = (value: boolean): PythonValue => ({ type: 'bool', value });
export const pyNone: PythonValue = { type: 'NoneType', value: null };
export const pyStr = (value: string): PythonValue => ({ type: 'str', value });

/** Python's `float(x)` of a metric's return value, as `evaluate()` uses it to combine scores. */
export function pythonFloat(value: PythonValue): number {
  switch (value.type) {
    case 'float':
    case 'int':
      return value.value;
    case 'bool':
      return value.value ? 1 : 0;
    case 'NoneType':
      throw new PythonException(
        'TypeError',
        "float() argument must be a string or a real number, not 'NoneType'",
      );
    case 'str': {
      const parsed = Number(value.value.trim());
      if (value.value.trim() === '' || Number.isNaN(parsed)) {
        throw new PythonException(
          'ValueError',
          `could not convert string to float: '${value.value}'`,
        );
      }
      return parsed;
    }
  }
}

/**
 * An exception the original Python function raises for this input (a KeyError, a TypeError on
 * None, a ZeroDivisionError…). Upstream's `evaluate()` does not catch these: the task gets no score.
 * `type` is the Python class name, as the golden fixtures record it.
 */
export class PythonException extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = `PythonException(${type})`;
  }
}
