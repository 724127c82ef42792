import type { ArtifactStore } from '@benchfleet/artifacts';
import type { Database } from '@benchfleet/db';
import { writeFixtureRun, type FixtureTask } from './run-fixtures.js';

/**
 * Two WebShop runs over the same 13 goals with a known paired table: 3 pass in both, 1 only in
 * A, 6 only in B, 2 in neither, and one goal B has not settled (left out of the pairs).
 */
export const COMPARISON_TABLE = { both_pass: 3, only_a: 1, only_b: 6, neither: 2 } as const;

function goal(index: number, reward: number | undefined): FixtureTask {
  const taskId = `goal-${String(index).padStart(5, '0')}`;
  const base = { taskId, domain: index < 6 ? 'test' : 'eval', instruction: `goal ${index}` };
  if (reward === undefined) return base;
  return {
    ...base,
    attempts: [
      {
        steps: [
          {
            action: { action: 'click[buy now]', kind: 'click', valid: true },
            observation: 'Thank you for shopping',
            reward,
          },
        ],
        outcome: {
          status: reward === 1 ? 'success' : 'failed',
          success: reward === 1,
          reward,
          durationMs: 50 + index,
          finalApiStatus: 'BOUGHT',
          result: { stop_reason: 'bought' },
        },
      },
    ],
  };
}

export async function writeComparisonRuns(
  db: Database,
  artifacts: ArtifactStore,
  ids: { a: string; b: string },
): Promise<void> {
  // [reward in A, reward in B] per goal
  const rewards: [number, number | undefined][] = [
    [1, 1],
    [1, 1],
    [1, 1],
    [1, 0.5],
    [0, 1],
    [0.25, 1],
    [0.5, 1],
    [0, 1],
    [0.75, 1],
    [0, 1],
    [0.5, 0.25],
    [0, 0.75],
    [1, undefined],
  ];
  await writeFixtureRun(db, artifacts, {
    id: ids.a,
    name: 'webshop-rule-a',
    benchmark: 'webshop',
    agent: { kind: 'rule' },
    tasks: rewards.map(([a], i) => goal(i, a)),
  });
  await writeFixtureRun(db, artifacts, {
    id: ids.b,
    name: 'webshop-llm-b',
    benchmark: 'webshop',
    agent: { kind: 'llm', model: 'fake-model' },
    tasks: rewards.map(([, b], i) => goal(i, b)),
  });
}
