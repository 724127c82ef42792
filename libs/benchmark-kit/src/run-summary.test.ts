import { describe, expect, it } from 'vitest';
import { readRunSummary, type RunSummary } from './run-summary.js';

const numbers = {
  total_tasks: 2,
  failed: 1,
  cancelled: 0,
  errors: 0,
  success_rate: 0.5,
  avg_steps: 3,
  avg_duration_seconds: 12.5,
  max_steps_task: { task_id: 'a', steps: 4 },
  min_steps_task: { task_id: 'b', steps: 2 },
  longest_task: { task_id: 'a', duration_seconds: 20 },
};

const stored = (successes: Record<string, number>, domainSuccesses: Record<string, number>) => ({
  run_id: 'run-1',
  benchmark: 'webshop',
  success_label: 'reward = 1',
  summary: { ...numbers, ...successes },
  per_domain: { beauty: { total: 2, ...domainSuccesses, success_rate: 0.5, avg_steps: 3 } },
  pending: 0,
  tokens_in: 10,
  tokens_out: 5,
  cost_usd: null,
  cost_per_success_usd: null,
  scores: { score: 50 },
  started_at: '2026-11-20T10:00:00.000Z',
  finished_at: '2026-11-20T10:00:30.000Z',
  total_duration_seconds: 30,
});

describe('runs.summary', () => {
  it('counts successes as succeeded', () => {
    const summary = readRunSummary(stored({ succeeded: 1 }, { succeeded: 1 }));
    expect(summary?.summary.succeeded).toBe(1);
    expect(summary?.per_domain.beauty?.succeeded).toBe(1);
    expect(summary?.summary).not.toHaveProperty('completed');
  });

  it('reads a summary stored before the rename, whose successes are under `completed`', () => {
    const summary: RunSummary | null = readRunSummary(stored({ completed: 1 }, { completed: 1 }));
    expect(summary?.summary).toMatchObject({ total_tasks: 2, succeeded: 1, failed: 1 });
    expect(summary?.summary).not.toHaveProperty('completed');
    expect(summary?.per_domain.beauty).toEqual({
      total: 2,
      succeeded: 1,
      success_rate: 0.5,
      avg_steps: 3,
    });
  });

  it('is none when the successes are missing under both names', () => {
    expect(readRunSummary(stored({}, {}))).toBeNull();
  });
});
