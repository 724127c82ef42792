import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { cancelRun } from '@benchfleet/runs';
import { withSchedulerServices } from '../config.js';

export function registerCancel(program: Command, registry: BenchmarkRegistry): void {
  program
    .command('cancel <run>')
    .description('cancel a run: remove its waiting jobs, abort its active ones (OSWorld: cancels the Bytebot task), mark it cancelled')
    .action((runId: string) =>
      withSchedulerServices({ redis: true }, async ({ db, producer }) => {
        const report = await cancelRun(db, producer, registry, runId);
        process.stderr.write(
          report.alreadyCancelled
            ? `run ${runId} was cancelled already; ${report.removedJobs} leftover job(s) removed\n`
            : `run ${runId} cancelled: ${report.cancelled} task(s) cancelled, ${report.removedJobs} waiting job(s) removed, active jobs told to stop\n`,
        );
      }),
    );
}
