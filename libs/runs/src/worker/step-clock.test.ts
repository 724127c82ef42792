import { describe, expect, it } from 'vitest';
import { microsToIso, StepClock } from './step-clock.js';

describe('microsToIso', () => {
  it('keeps the microseconds Postgres keeps', () => {
    expect(microsToIso(Date.UTC(2026, 11, 8, 1, 2, 3, 456) * 1000 + 789)).toBe(
      '2026-12-08T01:02:03.456789Z',
    );
    expect(microsToIso(Date.UTC(2026, 11, 8) * 1000 + 7)).toBe('2026-12-08T00:00:00.000007Z');
  });
});

describe('StepClock', () => {
  it('stamps steps rising, even when the clock does not move or goes back', () => {
    const now = [5_000_000, 5_000_000, 4_999_000, 6_000_000];
    const sut = new StepClock(() => now.shift() ?? 0);
    expect([sut.next(), sut.next(), sut.next(), sut.next()]).toEqual([
      microsToIso(5_000_000),
      microsToIso(5_000_001),
      microsToIso(5_000_002),
      microsToIso(6_000_000),
    ]);
  });
});
