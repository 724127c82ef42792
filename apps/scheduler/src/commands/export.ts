import { createProgressReporter } from '@benchfleet/core';
import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { exportFormats, exportRun, GENERIC_EXPORTERS } from '@benchfleet/runs';
import { withSchedulerServices } from '../config.js';

export function configureExport(command: Command, registry: BenchmarkRegistry): void {
  const formats = [
    ...registry.all.flatMap((benchmark) =>
      Object.entries(benchmark.exporters).map(
        ([format, exporter]) => `${format} (${benchmark.name}): ${exporter.description}`,
      ),
    ),
    ...Object.entries(GENERIC_EXPORTERS).map(
      ([format, exporter]) => `${format} (any benchmark): ${exporter.description}`,
    ),
  ];
  command
    .description(`${command.description()}; ${formats.join('; ')}`)
    .option(
      '--format <format>',
      `one of ${exportFormats(registry).join(', ')} (default: the run's benchmark's first)`,
    )
    .option(
      '--out <dir>',
      'directory to write, replaced only once the export has succeeded (default: ./<format>)',
    )
    .action(async (runId: string, flags: { format?: string; out?: string }) => {
      await withSchedulerServices(
        { redis: false, schema: registry.migrations },
        async ({ config, db }) => {
          const progress = createProgressReporter(`export ${runId}`, 1);
          const report = await exportRun(
            { db, registry, artifacts: config.artifactSettings },
            runId,
            flags.format,
            flags.out,
            (done, total) => {
              progress.setTotal(total);
              progress.update(done);
            },
          );
          progress.stop();
          process.stderr.write(
            `run ${runId}: ${report.exported} task(s) written to ${report.outDir}` +
              `${report.unfinished > 0 ? `; ${report.unfinished} unfinished task(s) left out` : ''}` +
              `${report.problems.length > 0 ? `; ${report.problems.length} problem(s), listed in the export (first: ${report.problems[0]})` : ''}\n`,
          );
        },
      );
    });
}
