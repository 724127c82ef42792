import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';

export function registerAggregate(program: Command): void {
  program
    .command('aggregate <run>')
    .description("compute a run's summary from Postgres now, store it in runs.summary and print it")
    .option('--out <file>', 'also write the summary as JSON (final.json numbers)')
    .option('--markdown <file>', 'also write a Markdown report')
    .action(async (runId: string, flags: { out?: string; markdown?: string }) => {
      // Imported when the command runs: `--help` and the other commands start without them.
      const [{ requireRun, withSchedulerServices }, { aggregateRun, summaryMarkdown }] = await Promise.all([import('../config.js'), import('../run-summary.js')]);
      await withSchedulerServices({ redis: false }, async ({ db }) => {
        const run = await requireRun(db, runId);
        const summary = await aggregateRun(db, runId);
        const json = `${JSON.stringify(summary, null, 2)}\n`;
        if (flags.out) await writeFile(flags.out, json);
        if (flags.markdown) await writeFile(flags.markdown, summaryMarkdown(summary, run.name));
        process.stdout.write(flags.out ? `${summaryMarkdown(summary, run.name)}` : json);
      });
    });
}
