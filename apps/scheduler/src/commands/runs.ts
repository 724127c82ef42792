import type { Command } from 'commander';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { parsedOption, positiveInteger } from '@benchfleet/core';
import { RunsRepository } from '@benchfleet/db';
import { withSchedulerServices } from '../config.js';

export function configureRuns(command: Command, registry: BenchmarkRegistry): void {
  command
    .addOption(parsedOption('--limit <n>', 'how many (default 20)', positiveInteger).default(20))
    .option('--json', 'print JSON lines')
    .action(async (flags: { limit: number; json?: boolean }) => {
      await withSchedulerServices({ redis: false, schema: registry.migrations }, async ({ db }) => {
        const rows = await new RunsRepository(db).list(flags.limit);
        if (flags.json) {
          for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
          return;
        }
        const header = [
          'run',
          'name',
          'benchmark',
          'status',
          'tasks',
          'success',
          'failed',
          'cancelled',
          'errors',
          'pending',
          'created',
        ];
        const table = rows.map((r) => [
          r.run_id,
          r.name,
          r.benchmark,
          r.run_status,
          String(r.total),
          String(r.succeeded),
          String(r.failed),
          String(r.cancelled),
          String(r.errors),
          String(r.queued + r.running),
          r.created_at.toISOString(),
        ]);
        process.stdout.write(formatTable(header, table));
      });
    });
}

export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')}\n`;
}
