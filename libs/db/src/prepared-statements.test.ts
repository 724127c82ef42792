import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import { createDatabase, type Database } from './database.js';
import { RunsRepository } from './runs-repository.js';
import { StepsRepository } from './steps-repository.js';
import { TasksRepository } from './tasks-repository.js';

const services = useTestServices();
let single: Database | undefined;

afterAll(async () => {
  await single?.destroy();
});

describe('prepared hot statements', () => {
  // Planning the per-episode statements cost Postgres about as much as running them (bench/webshop-fleet.ts).
  it('prepares the statements every episode runs once per connection, with one generic plan, and nothing else', async () => {
    single = createDatabase(services.databaseUrl, { max: 1 });
    await new RunsRepository(single).createWithTasks({
      run: {
        id: 'run-p',
        name: 'run-p',
        benchmark: 'echo',
        config: JSON.stringify({}),
        code_version: 'test',
      },
      tasks: ['a', 'b'].map((task_id, seq) => ({
        task_id,
        seq,
        domain: 'd',
        instruction: 'i',
        spec: JSON.stringify({}),
      })),
    });
    const tasks = new TasksRepository(single);
    const steps = new StepsRepository(single);
    const episode = async (taskId: string) => {
      const opened = await tasks.openAttempt('run-p', taskId, 'w', 1);
      await steps.insertMany([
        { run_id: 'run-p', task_id: taskId, attempt: opened!.attempt, step: 1, observation: 'o' },
      ]);
      return tasks.settle('run-p', taskId, opened!.attempt, {
        status: 'success',
        totalSteps: 1,
        durationMs: 1,
      });
    };
    const preparedNow = async () =>
      (
        await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
          single!,
        )
      ).rows
        .map((row) => row.statement.replace(/\s+/g, ' ').slice(0, 84))
        .sort();

    expect(await episode('a')).toEqual({ recorded: true, runSettled: false });
    const afterOne = await preparedNow();
    expect(afterOne).toEqual([
      '/* prepared */ insert into steps (run_id, task_id, attempt, step, at, action, text, ',
      "/* prepared */ select 1 from tasks where run_id = $1 and status in ('queued', 'runni",
      // Settling, then opening attempts.
      '/* prepared */ with input as ( select * from unnest( $1::text[], $2::text[], $3::int',
      '/* prepared */ with input as ( select * from unnest($1::text[], $2::text[], $3::text',
    ]);
    // Another episode reuses them: no new statement per call.
    expect(await episode('b')).toEqual({ recorded: true, runSettled: true });
    expect(await preparedNow()).toEqual(afterOne);
    expect((await steps.listByTask('run-p', 'b')).map((step) => step.observation)).toEqual(['o']);
    expect(
      (await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(single)).rows[0]
        ?.plan_cache_mode,
    ).toBe('force_generic_plan');
  });
});
