/** A fault of the world around the fleet (a service down, a timeout): the job is retried. */
export class InfrastructureError extends Error {
  override readonly name = 'InfrastructureError';
}

/** A service the process needs cannot be reached; the message names the variable to fix. */
export class ServiceUnreachableError extends Error {
  override readonly name = 'ServiceUnreachableError';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/** Bad input from a user: printed as one line, exit code 2, nothing written. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((inner: unknown) => errorMessage(inner)).join('; ');
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
