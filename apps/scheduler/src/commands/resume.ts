import type { Command } from 'commander';
import { TASK_STATUSES, type TaskStatus } from '@benchfleet/core/statuses';

async function requeue(runId: string, select: { includeFailed?: boolean; statuses?: TaskStatus[] }, verb: string): Promise<void> {
  const [{ tasksRepository }, { requireRun, withSchedulerServices }, { requeueTasks }] = await Promise.all([import('@benchfleet/db'), import('../config.js'), import('../run-enqueuer.js')]);
  return withSchedulerServices({ redis: true }, async ({ db, producer }) => {
    const run = await requireRun(db, runId);
    const tasks = await tasksRepository(db).listForResume(runId, select);
    const report = await requeueTasks({ db, producer }, runId, run.benchmark, tasks);
    process.stderr.write(
      `${verb} run ${runId}: ${report.requeued.length} task(s) re-enqueued, ${report.alreadyQueued.length} already queued, ${report.active.length} running now\n`,
    );
  });
}

export function registerResume(program: Command): void {
  program
    .command('resume <run>')
    .description('re-enqueue the tasks with no outcome or whose last attempt ended in an infrastructure error')
    .option('--include-failed', 'also re-run agent failures (failed, cancelled)')
    .action(async (runId: string, flags: { includeFailed?: boolean }) => {
      await requeue(runId, { includeFailed: flags.includeFailed === true }, 'resumed');
    });

  program
    .command('retry <run>')
    .description('re-run the tasks of a run that ended in the given status')
    .requiredOption('--status <status>', `one of ${TASK_STATUSES.join(', ')}`)
    .action(async (runId: string, flags: { status: string }) => {
      const statuses = flags.status.split(',').map((s) => s.trim());
      const bad = statuses.filter((s) => !(TASK_STATUSES as readonly string[]).includes(s));
      const { UsageError } = await import('@benchfleet/core');
      if (bad.length) throw new UsageError(`--status ${bad.join(',')}: expected one of ${TASK_STATUSES.join(', ')}`);
      await requeue(runId, { statuses: statuses as TaskStatus[] }, 'retried');
    });
}
