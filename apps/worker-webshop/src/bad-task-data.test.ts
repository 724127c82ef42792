import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  runCli,
  startCli,
  useTestServices,
  waitFor,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

const services = useTestServices();
let producer: JobProducer;
const workers: StartedProcess[] = [];

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

afterEach(async () => {
  await killLeftoverProcesses(workers);
});

afterAll(async () => {
  await producer.close();
});

async function tasksOf(runId: string) {
  return services.db
    .selectFrom('tasks')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('seq')
    .execute();
}

describe('a poison task (goal data that makes the episode throw)', () => {
  // Once: it was retried 5 times as `infra` with a bare TypeError naming neither goal nor
  // catalog, counted against --max-infra-error-rate, and `scheduler resume` ran it again.
  it('ends once as bad task data naming the task, goal and catalog: not infra, not counted against the infra budget, not re-run by resume', async () => {
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      {
        benchmark: 'webshop',
        maxTasks: 6,
        flags: { split: 'test', agent: 'rule' },
        // A single infra failure would pause the run.
        limits: { maxInfraErrorRate: '0', infraWindow: '20' },
      },
    );
    const [poisoned] = await tasksOf(runId);
    const spec = poisoned!.spec as { goal_index: number };
    const run = await services.db
      .selectFrom('runs')
      .select('config')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    const catalogId = (run.config as { catalog_id: string }).catalog_id;
    // The goal's attributes, which the reward reads, are not a list.
    await sql`update webshop_goals set goal = jsonb_set(goal::jsonb, '{attributes}', 'null')::json
              where catalog_id = ${catalogId} and goal_index = ${spec.goal_index}`.execute(
      services.db,
    );

    const worker = startCli('worker-webshop', ['--worker-id', 'poison-a', '--concurrency', '4'], {
      ...services.env,
      LOG_LEVEL: 'info',
    });
    workers.push(worker);
    const tasks = await waitFor(
      `run ${runId} to settle`,
      async () => {
        const all = await tasksOf(runId);
        return all.every((task) => task.status !== 'queued' && task.status !== 'running')
          ? all
          : undefined;
      },
      600_000,
      200,
    );

    const bad = tasks.find((task) => task.task_id === poisoned!.task_id)!;
    expect(bad).toMatchObject({
      status: 'error',
      error_class: 'permanent',
      final_api_status: 'BAD_TASK_DATA',
      attempts: 1,
    });
    expect(bad.error).toMatch(
      new RegExp(
        `^bad task data: task ${bad.task_id} of run ${runId} \\(goal ${spec.goal_index} of WebShop catalog ${catalogId}\\): the episode threw TypeError: `,
      ),
    );
    const attempts = await services.db
      .selectFrom('attempts')
      .select(['attempt', 'status', 'error_class'])
      .where('run_id', '=', runId)
      .where('task_id', '=', bad.task_id)
      .execute();
    expect(attempts).toEqual([{ attempt: 1, status: 'error', error_class: 'permanent' }]);
    for (const task of tasks.filter((t) => t !== bad))
      expect(['success', 'failed']).toContain(task.status);
    const halted = await services.db
      .selectFrom('runs')
      .select(['halt', 'status'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(halted.halt).toBeNull();

    const resumed = await runCli('scheduler', ['resume', runId], services.env);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`resumed run ${runId}: 0 task(s) re-enqueued`);
    expect((await tasksOf(runId)).find((t) => t.task_id === bad.task_id)).toMatchObject({
      status: 'error',
      attempts: 1,
    });
  });
});
