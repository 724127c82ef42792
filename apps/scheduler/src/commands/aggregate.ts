import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { checkOutputFile, UsageError, writeFileAtomically } from '@benchfleet/core';
import { aggregateRun, summaryMarkdown } from '@benchfleet/runs';
import { requireRun, withSchedulerServices } from '../config.js';

export function configureAggregate(command: Command, registry: BenchmarkRegistry): void {
  command
    .option('--out <file>', 'also write the summary as JSON (final.json numbers)')
    .option('--markdown <file>', 'also write a Markdown report')
    .action(async (runId: string, flags: { out?: string; markdown?: string }) => {
      // Before anything is read or written: the summary is saved to the run as well.
      const out = flags.out === undefined ? undefined : await checkOutputFile('--out', flags.out);
      const markdown =
        flags.markdown === undefined
          ? undefined
          : await checkOutputFile('--markdown', flags.markdown);
      if (out !== undefined && out === markdown)
        throw new UsageError(
          `--out and --markdown both name ${flags.out}: give the JSON and the report a file each`,
        );
      await withSchedulerServices({ redis: false, schema: registry.migrations }, async ({ db }) => {
        const run = await requireRun(db, runId);
        const summary = await aggregateRun(db, registry, runId);
        const json = `${JSON.stringify(summary, null, 2)}\n`;
        if (out) await writeFileAtomically(out, json);
        if (markdown) await writeFileAtomically(markdown, summaryMarkdown(summary, run.name));
        process.stdout.write(out ? `${summaryMarkdown(summary, run.name)}` : json);
      });
    });
}
