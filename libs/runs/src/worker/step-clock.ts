/** Microseconds since the epoch, finer than `Date` (steps of a fast episode fall in one millisecond). */
function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** An ISO timestamp with microseconds, as Postgres' timestamptz keeps them. */
export function microsToIso(micros: number): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/**
 * The `at` of an attempt's steps: stamped when the episode records them, not when a batch reaches
 * Postgres, to the microsecond and rising (two steps never share a stamp).
 */
export class StepClock {
  private last = 0;

  constructor(private readonly now: () => number = nowMicros) {}

  next(): string {
    this.last = Math.max(this.now(), this.last + 1);
    return microsToIso(this.last);
  }
}
