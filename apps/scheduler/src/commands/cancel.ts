import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { cancelRun } from '@benchfleet/runs';
import { requireRun, withSchedulerServices } from '../config.js';

export function registerCancel(program: Command, registry: BenchmarkRegistry): void {
  program
    .command('cancel <run>')
    .description('cancel a run: remove its waiting jobs, abort its active ones (OSWorld: cancels the Bytebot task), mark it cancelled')
    .action((runId: string) =>
      withSchedulerServices({ redis: true }, async ({ db, producer }) => {
        await requireRun(db, runId);
        const report = await cancelRun(db, producer, registry, runId);
        process.stderr.write(
          `run ${runId} cancelled: ${report.cancelled} task(s) cancelled, ${report.removedJobs} waiting job(s) removed, active jobs told to stop\n`,
        );
      }),
    );
}
