import type { Command } from 'commander';
import { formatRegradeReport, type BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { UsageError } from '@benchfleet/core';
import { requireRun, withSchedulerServices } from '../config.js';

export function configureRegrade(command: Command, registry: BenchmarkRegistry): void {
  command
    .option('--task <id>', 'only this task of the run')
    .option('--force', 'grade again even where the latest grade has the current metric version')
    .option('--json', 'print the report as JSON')
    .action(async (runId: string, flags: { task?: string; force?: boolean; json?: boolean }) => {
      await withSchedulerServices(
        { redis: false, schema: registry.migrations },
        async ({ config, db }) => {
          const run = await requireRun(db, runId);
          const regrader = registry.get(run.benchmark).regrade;
          if (!regrader)
            throw new UsageError(
              `run ${runId} is a ${run.benchmark} run: ${run.benchmark} keeps no grade of an end state to score again`,
            );
          const report = await regrader.regrade({
            db,
            run,
            artifacts: config.artifactSettings,
            ...(flags.task !== undefined ? { taskId: flags.task } : {}),
            force: flags.force === true,
          });
          process.stdout.write(
            flags.json
              ? `${JSON.stringify(report)}\n`
              : `${formatRegradeReport(report).join('\n')}\n`,
          );
        },
      );
    });
}
