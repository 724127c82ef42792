import { describe, expect, it } from 'vitest';
import { computeRunNumbers } from './run-numbers.js';

// Expected numbers were computed with the original compute_final_stats on the same results.
const RESULTS = [
  { task_id: 't1', domain: 'chrome', status: 'success', total_steps: 12, duration_seconds: 95.2 },
  { task_id: 't2', domain: 'chrome', status: 'failed', total_steps: 3, duration_seconds: 30.05 },
  {
    task_id: 't3',
    domain: 'gimp',
    status: 'cancelled',
    total_steps: 100,
    duration_seconds: 1245.6,
  },
  { task_id: 't4', domain: 'gimp', status: 'error', total_steps: 0, duration_seconds: 0 },
  { task_id: 't5', domain: 'os', status: 'success', total_steps: 2, duration_seconds: 12.25 },
  { task_id: 't6', domain: 'chrome', status: 'success', total_steps: 12, duration_seconds: 95.2 },
];

describe('computeRunNumbers', () => {
  it('computes the original summary: rounding, errors left out of the averages, first wins ties', () => {
    expect(computeRunNumbers(RESULTS)).toEqual({
      summary: {
        total_tasks: 6,
        succeeded: 3,
        failed: 1,
        cancelled: 1,
        errors: 1,
        success_rate: 0.5,
        avg_steps: 25.8,
        avg_duration_seconds: 295.7,
        max_steps_task: { task_id: 't3', steps: 100 },
        min_steps_task: { task_id: 't5', steps: 2 },
        longest_task: { task_id: 't3', duration_seconds: 1245.6 },
      },
      per_domain: {
        chrome: { total: 3, succeeded: 2, success_rate: 0.6667, avg_steps: 9 },
        gimp: { total: 2, succeeded: 0, success_rate: 0, avg_steps: 100 },
        os: { total: 1, succeeded: 1, success_rate: 1, avg_steps: 2 },
      },
    });
  });

  it('counts an error task for max_steps_task but not for min_steps_task', () => {
    const { summary } = computeRunNumbers([
      { task_id: 'err', domain: 'os', status: 'error', total_steps: 0, duration_seconds: 0 },
      { task_id: 'ok', domain: 'os', status: 'success', total_steps: 0, duration_seconds: 1 },
    ]);
    expect(summary.max_steps_task).toEqual({ task_id: 'err', steps: 0 });
    expect(summary.min_steps_task).toEqual({ task_id: 'ok', steps: 0 });
  });

  it('gives zeros and nulls for no results', () => {
    expect(computeRunNumbers([]).summary).toMatchObject({
      total_tasks: 0,
      success_rate: 0,
      avg_steps: 0,
      avg_duration_seconds: 0,
      max_steps_task: null,
      min_steps_task: null,
      longest_task: null,
    });
  });
});
