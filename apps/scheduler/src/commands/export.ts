import type { Command } from 'commander';

const EXPORT_FORMATS = ['osworld-logs'] as const;

export function registerExport(program: Command): void {
  program
    .command('export <run>')
    .description(
      "write a run's results in another layout; osworld-logs: the original Bytebot OSWorld benchmark's directory " +
        '(<task_id>/step_NNN.json, <task_id>/screenshots/step_NNN.png, <task_id>/result.json, final.json)',
    )
    .option('--format <format>', `one of ${EXPORT_FORMATS.join(', ')}`, 'osworld-logs')
    .option('--out <dir>', 'directory to write (created if missing)', './osworld-logs')
    .action(async (runId: string, flags: { format: string; out: string }) => {
      const [{ UsageError }, { withSchedulerServices }, { exportOsworldLogs }] = await Promise.all([import('@benchfleet/core'), import('../config.js'), import('../osworld-export.js')]);
      if (!(EXPORT_FORMATS as readonly string[]).includes(flags.format)) {
        throw new UsageError(`--format ${flags.format}: expected one of ${EXPORT_FORMATS.join(', ')}`);
      }
      await withSchedulerServices({ redis: false }, async ({ config, db }) => {
        const report = await exportOsworldLogs(db, runId, flags.out, config.artifactSettings);
        const { summary } = report.finalJson;
        process.stderr.write(
          `run ${runId}: ${report.exported} task(s) written to ${report.outDir} ` +
            `(${summary.completed} success, ${summary.failed} failed, ${summary.cancelled} cancelled, ${summary.errors} error)` +
            `${report.unfinished > 0 ? `; ${report.unfinished} unfinished task(s) left out` : ''}\n`,
        );
      });
    });
}
