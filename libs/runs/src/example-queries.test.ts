import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunsRepository, TasksRepository } from '@benchfleet/db';
import { useTestServices } from '@benchfleet/testing';
import { EXAMPLE_QUERIES } from './example-queries.js';

const services = useTestServices();

type Row = {
  task_id: string;
  domain: string;
  status: 'success' | 'failed' | 'cancelled' | 'error';
  steps: number;
  reward: number;
  ms: number;
  cost: number;
};

const runA: Row[] = [
  {
    task_id: 't1',
    domain: 'chrome',
    status: 'success',
    steps: 5,
    reward: 1,
    ms: 40_000,
    cost: 0.02,
  },
  {
    task_id: 't2',
    domain: 'chrome',
    status: 'failed',
    steps: 9,
    reward: 0,
    ms: 90_000,
    cost: 0.05,
  },
  { task_id: 't3', domain: 'gimp', status: 'success', steps: 5, reward: 1, ms: 20_000, cost: 0.01 },
  { task_id: 't4', domain: 'gimp', status: 'error', steps: 0, reward: 0, ms: 1_000, cost: 0 },
];
const runB: Row[] = runA.map((row) =>
  row.task_id === 't2' ? { ...row, status: 'success', reward: 1 } : row,
);

async function seedRun(id: string, rows: Row[]): Promise<void> {
  await new RunsRepository(services.db).createWithTasks({
    run: { id, name: id, benchmark: 'osworld', config: JSON.stringify({}), code_version: 'test' },
    tasks: rows.map((row, seq) => ({
      task_id: row.task_id,
      seq,
      domain: row.domain,
      instruction: row.task_id,
      spec: JSON.stringify({}),
    })),
  });
  const tasks = new TasksRepository(services.db);
  for (const row of rows) {
    const opened = await tasks.openAttempt(id, row.task_id, 'w', 1);
    await tasks.settle(id, row.task_id, opened!.attempt, {
      status: row.status,
      errorClass: row.status === 'error' ? 'infra' : null,
      totalSteps: row.steps,
      reward: row.reward,
      success: row.status === 'success',
      durationMs: row.ms,
      costUsd: row.cost,
      tokensIn: 100,
      tokensOut: 10,
    });
  }
}

function run(query: string, params: Record<string, string>) {
  let text = query;
  for (const [name, value] of Object.entries(params))
    text = text.replaceAll(`:'${name}'`, `'${value}'`);
  return sql
    .raw<Record<string, unknown>>(text)
    .execute(services.db)
    .then((result) => result.rows);
}

const byTitle = (title: string) => {
  const query = EXAMPLE_QUERIES.find((q) => q.title === title);
  if (!query) throw new Error(`no example query "${title}"`);
  return query.sql;
};

beforeAll(async () => {
  await seedRun('run-a', runA);
  await seedRun('run-b', runB);
});

describe('the example queries in README.md', () => {
  it('are in README.md word for word', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    for (const query of EXAMPLE_QUERIES) expect(readme).toContain(query.sql.trim());
  });

  it('run in psql as README shows: run ids given with -v, unquoted', () => {
    const psql = spawnSync(
      'psql',
      [
        services.databaseUrl,
        '-X',
        '-A',
        '-t',
        '-v',
        'ON_ERROR_STOP=1',
        '-v',
        'run=run-a',
        '-v',
        'other_run=run-b',
      ],
      {
        input: byTitle('Two runs compared task by task'),
        encoding: 'utf8',
      },
    );
    expect(psql.error).toBeUndefined();
    expect(psql.stderr).toBe('');
    expect(psql.stdout.trim()).toBe('t2|chrome|failed|success|0|1');
  });

  it('success by domain', async () => {
    const rows = await run(byTitle('Success rate by domain'), { run: 'run-a' });
    expect(rows.map((r) => [r.domain, r.total, r.succeeded, r.success_rate])).toEqual([
      ['chrome', 2, 1, 0.5],
      ['gimp', 2, 1, 0.5],
    ]);
  });

  it('slowest tasks', async () => {
    const rows = await run(byTitle('Slowest tasks'), { run: 'run-a' });
    expect(rows.map((r) => r.task_id)).toEqual(['t2', 't1', 't3', 't4']);
    expect(Number(rows[0]?.seconds)).toBe(90);
  });

  it('step distribution', async () => {
    const rows = await run(byTitle('Step distribution'), { run: 'run-a' });
    expect(rows.map((r) => [r.steps, Number(r.tasks)])).toEqual([
      [5, 2],
      [9, 1],
    ]);
  });

  it('two runs compared task by task', async () => {
    const rows = await run(byTitle('Two runs compared task by task'), {
      run: 'run-a',
      other_run: 'run-b',
    });
    expect(rows).toEqual([
      {
        task_id: 't2',
        domain: 'chrome',
        status_a: 'failed',
        status_b: 'success',
        reward_a: 0,
        reward_b: 1,
      },
    ]);
  });

  it('token cost per success', async () => {
    const rows = await run(byTitle('Token cost per success'), { run: 'run-a' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tokens_in: 400, tokens_out: 40, succeeded: 2 });
    expect(Number(rows[0]?.cost_usd)).toBeCloseTo(0.08, 10);
    expect(Number(rows[0]?.cost_per_success_usd)).toBeCloseTo(0.04, 6);
  });
});
