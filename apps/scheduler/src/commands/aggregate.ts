import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { aggregateRun, summaryMarkdown } from '@benchfleet/runs';
import { requireRun, withSchedulerServices } from '../config.js';

export function configureAggregate(command: Command, registry: BenchmarkRegistry): void {
  command
    .option('--out <file>', 'also write the summary as JSON (final.json numbers)')
    .option('--markdown <file>', 'also write a Markdown report')
    .action(async (runId: string, flags: { out?: string; markdown?: string }) => {
      await withSchedulerServices({ redis: false }, async ({ db }) => {
        const run = await requireRun(db, runId);
        const summary = await aggregateRun(db, registry, runId);
        const json = `${JSON.stringify(summary, null, 2)}\n`;
        if (flags.out) await writeFile(flags.out, json);
        if (flags.markdown) await writeFile(flags.markdown, summaryMarkdown(summary, run.name));
        process.stdout.write(flags.out ? `${summaryMarkdown(summary, run.name)}` : json);
      });
    });
}
