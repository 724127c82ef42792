import type { Command } from 'commander';

export function registerCancel(program: Command): void {
  program
    .command('cancel <run>')
    .description('cancel a run: remove its waiting jobs, abort its active ones (OSWorld: cancels the Bytebot task), mark it cancelled')
    .action(async (runId: string) => {
      const [{ runsRepository, tasksRepository }, { jobCatalog, taskJobId }, { requireRun, withSchedulerServices }, { aggregateRun }] = await Promise.all([
        import('@benchfleet/db'),
        import('@benchfleet/queue'),
        import('../config.js'),
        import('../run-summary.js'),
      ]);
      await withSchedulerServices({ redis: true }, async ({ db, producer }) => {
        const run = await requireRun(db, runId);
        const tasks = await tasksRepository(db).listByRun(runId);
        const open = tasks.filter((task) => task.status === 'queued' || task.status === 'running');
        const queue = run.benchmark === 'osworld' ? jobCatalog['osworld-task'].queue : jobCatalog['webshop-episode'].queue;
        // Rows first: a worker finishing now finds its task cancelled and records nothing over it.
        await runsRepository(db).markCancelled(runId);
        const cancelled = await tasksRepository(db).cancelPending(runId);
        const removed = await producer.removeJobs(
          queue,
          open.map((task) => taskJobId(runId, task.task_id)),
        );
        await producer.publishCancel(runId);
        await aggregateRun(db, runId);
        process.stderr.write(`run ${runId} cancelled: ${cancelled} task(s) cancelled, ${removed} waiting job(s) removed, active jobs told to stop\n`);
      });
    });
}
