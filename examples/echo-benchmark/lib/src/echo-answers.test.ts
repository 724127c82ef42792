import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, TransientError, type TaskStatus } from '@benchfleet/core';
import { benchmarks } from '@benchfleet/benchmarks';
import { runNamedQuery, StepsRepository, StepWriter, type NamedQuery } from '@benchfleet/db';
import { JobProducer, type TaskPayload } from '@benchfleet/queue';
import { createBenchmarkTaskHandler } from '@benchfleet/runs';
import { enqueueTestRun, useTestServices } from '@benchfleet/testing';
import { echoMigrations } from '../migrations/index.js';
import { EchoAnswersRepository } from './echo-answers-repository.js';
import { echoBenchmark, runEchoEpisode } from './echo-benchmark.js';
import { echoTaskDetail } from './echo-task-detail.js';
import type { EchoTables } from './echo-tables.js';

// The echo benchmark's own table: its migration runs through the registry, each attempt's answer
// is written keyed by attempt, and its dashboard panel reads the rows back through a named query.

const services = useTestServices();
const logger = createLogger({ level: 'silent' });
let producer: JobProducer;

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
});

afterAll(async () => {
  await producer.close();
});

/** What a BullMQ worker hands the task handler for the job's attempt `attempt` (1-based). */
function jobContext(runId: string, taskId: string, attempt: number) {
  return {
    job: {
      attemptsMade: attempt - 1,
      opts: echoBenchmark.job.options,
      queueName: echoBenchmark.job.queue,
    } as unknown as Job,
    definition: echoBenchmark.job,
    payload: { runId, taskId } as TaskPayload,
    signal: new AbortController().signal,
    logger,
    workerId: 'echo-test',
    outage: async () => null,
    tellRecorded: () => undefined,
  };
}

function answersOf(runId: string) {
  return services.db
    .withTables<EchoTables>()
    .selectFrom('echo_answers')
    .select(['task_id', 'attempt', 'answer', 'steps'])
    .where('run_id', '=', runId)
    .orderBy('task_id')
    .orderBy('attempt')
    .execute();
}

async function statusOf(runId: string, taskId: string): Promise<TaskStatus> {
  const task = await services.db
    .selectFrom('tasks')
    .select('status')
    .where('run_id', '=', runId)
    .where('task_id', '=', taskId)
    .executeTakeFirstOrThrow();
  return task.status;
}

describe("the echo benchmark's table, echo_answers", () => {
  it('comes with its descriptor: every file of its migrations folder, run by the registry with the core ones', async () => {
    const dir = fileURLToPath(new URL('../migrations/', import.meta.url));
    const files = readdirSync(dir)
      .filter((file) => /^\d{14}_.+\.ts$/.test(file))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(echoMigrations)).toEqual(files);
    expect(echoBenchmark.migrations).toBe(echoMigrations);
    // No hand-listed import outside its folder: the registry takes them from the descriptor.
    for (const name of files) expect(benchmarks.migrations[name]).toBe(echoMigrations[name]);
    // The per-file database is cloned from a template migrated with the registry's migrations.
    const applied = await sql<{ name: string }>`
      select name from benchfleet_migrations where name = ${files[0]!}`.execute(services.db);
    expect(applied.rows).toHaveLength(1);
    const key = await sql<{ column_name: string }>`
      select a.attname as column_name
      from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
      where i.indrelid = 'echo_answers'::regclass and i.indisprimary
      order by a.attnum`.execute(services.db);
    expect(key.rows.map((row) => row.column_name)).toEqual(['run_id', 'task_id', 'attempt']);
  });

  it('keeps one row per attempt: a retried attempt leaves its row, the retry writes its own, a second write of an attempt changes nothing', async () => {
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      {
        benchmark: 'echo',
        flags: { echoTasks: '1', echoStepMs: '0' },
      },
    );
    const answers = new EchoAnswersRepository(services.db);
    const episodes: number[] = [];
    const handler = createBenchmarkTaskHandler(
      echoBenchmark,
      {
        db: services.db,
        steps: new StepWriter(new StepsRepository(services.db)),
        onRunSettled: async () => undefined,
        logger,
      },
      {
        async episode(context) {
          episodes.push(context.attempt);
          const outcome = await runEchoEpisode(context, answers);
          // Its answer is written, then a fault: the attempt is retried, as BullMQ would.
          if (context.attempt === 1) throw new TransientError('lost the settle');
          return outcome;
        },
      },
    );

    await expect(handler(jobContext(runId, 'echo-000', 1))).rejects.toThrow('lost the settle');
    await handler(jobContext(runId, 'echo-000', 2));
    expect(episodes).toEqual([1, 2]);
    expect(await statusOf(runId, 'echo-000')).toBe('success');
    const both = [
      { task_id: 'echo-000', attempt: 1, answer: 'say 0', steps: 1 },
      { task_id: 'echo-000', attempt: 2, answer: 'say 0', steps: 1 },
    ];
    expect(await answersOf(runId)).toEqual(both);

    // The same attempt's answer written again (a write whose commit was not heard): nothing changes.
    await answers.record({
      run_id: runId,
      task_id: 'echo-000',
      attempt: 2,
      answer: 'a second write',
      steps: 9,
    });
    expect(await answersOf(runId)).toEqual(both);

    // Its dashboard panel: the rows, attempt by attempt, read by its named query.
    const ran: string[] = [];
    const panels = await echoTaskDetail({
      task: {
        run_id: runId,
        task_id: 'echo-000',
        status: 'success',
        final_api_status: null,
        reward: 1,
        success: true,
        spec: {},
        result: null,
      },
      query: <R>(query: NamedQuery<'run' | 'task'>) => {
        ran.push(query.name);
        return runNamedQuery<R, 'run' | 'task'>(services.db, query, {
          run: runId,
          task: 'echo-000',
        });
      },
    });
    expect(ran).toEqual(['echo_answers']);
    expect(panels.map((panel) => panel.id)).toEqual(['echo-answers']);
    expect(
      panels[0]?.table?.rows.map((row) => [row.key, row.cells['answer'], row.cells['steps']]),
    ).toEqual([
      ['1', 'say 0', '1'],
      ['2', 'say 0', '1'],
    ]);
  });
});
