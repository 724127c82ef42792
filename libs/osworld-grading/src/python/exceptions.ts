// Python's exceptions in the ports: the class a port raises where Python raises, the class hierarchy
// the ported `except` clauses test, and the marker for a Python feature the port does not reproduce.

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

/** Each class's base, so `except ValueError` also catches a JSONDecodeError. */
const baseOf: Readonly<Record<string, string>> = {
  Exception: 'BaseException',
  ArithmeticError: 'Exception',
  ZeroDivisionError: 'ArithmeticError',
  OverflowError: 'ArithmeticError',
  AssertionError: 'Exception',
  AttributeError: 'Exception',
  LookupError: 'Exception',
  IndexError: 'LookupError',
  KeyError: 'LookupError',
  NameError: 'Exception',
  UnboundLocalError: 'NameError',
  NotImplementedError: 'RuntimeError',
  RuntimeError: 'Exception',
  OSError: 'Exception',
  FileNotFoundError: 'OSError',
  IsADirectoryError: 'OSError',
  NotADirectoryError: 'OSError',
  PermissionError: 'OSError',
  TypeError: 'Exception',
  ValueError: 'Exception',
  JSONDecodeError: 'ValueError',
  UnicodeError: 'ValueError',
  UnicodeDecodeError: 'UnicodeError',
  // re.error
  error: 'Exception',
  // sqlite3
  DatabaseError: 'Error',
  Error: 'Exception',
  OperationalError: 'DatabaseError',
  ProgrammingError: 'DatabaseError',
  // yaml
  YAMLError: 'Exception',
  // mutagen: ID3NoHeaderError(error, ValueError) — modelled through ValueError, which is what callers catch
  ID3NoHeaderError: 'ValueError',
  EasyID3KeyError: 'KeyError',
};

/** Python's `isinstance(error, cls)` for a PythonException's class name. */
export function pyIsInstance(error: unknown, cls: string): error is PythonException {
  if (!(error instanceof PythonException)) return false;
  for (let type: string | undefined = error.type; type !== undefined; type = baseOf[type]) {
    if (type === cls) return true;
  }
  return false;
}

/** Runs `body`; a Python exception of class `cls` (or a subclass) gives `onError()` instead. */
export function pyTry<T>(body: () => T, cls: string, onError: (error: PythonException) => T): T {
  try {
    return body();
  } catch (error) {
    if (pyIsInstance(error, cls)) return onError(error);
    throw error;
  }
}

/** Async form of pyTry. */
export async function pyTryAsync<T>(
  body: () => Promise<T>,
  cls: string,
  onError: (error: PythonException) => T,
): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (pyIsInstance(error, cls)) return onError(error);
    throw error;
  }
}

/**
 * A Python feature the port does not reproduce (a regex construct JavaScript lacks, a YAML tag…).
 * Not a PythonException, so no emulated `except` swallows it: the task is ungraded, never misgraded.
 */
export class UnsupportedPythonFeature extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedPythonFeature';
  }
}
