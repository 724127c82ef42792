import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { cancelRun } from '@benchfleet/runs';
import { withSchedulerServices } from '../config.js';

export function configureCancel(command: Command, registry: BenchmarkRegistry): void {
  command.action((runId: string) =>
    withSchedulerServices(
      { redis: true, schema: registry.migrations },
      async ({ db, producer }) => {
        const report = await cancelRun(db, producer, registry, runId);
        process.stderr.write(
          report.alreadyCancelled
            ? `run ${runId} was cancelled already; ${report.removedJobs} leftover job(s) removed\n`
            : `run ${runId} cancelled: ${report.cancelled} task(s) cancelled, ${report.removedJobs} waiting job(s) removed, active jobs told to stop\n`,
        );
      },
    ),
  );
}
