import type { Command } from 'commander';
import { UsageError } from '@benchfleet/core';
import {
  DEFAULT_BOOTSTRAP,
  loadRunComparison,
  type PairedDifference,
  type RunComparison,
} from '@benchfleet/run-comparison';
import { requireRun, withSchedulerServices } from '../config.js';
import { formatTable } from './runs.js';

interface CompareFlags {
  json?: boolean;
  resamples: string;
  seed: string;
}

function integerFlag(flag: string, value: string, min: number, fix: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min) throw new UsageError(`${flag} ${value}: ${fix}`);
  return parsed;
}

const percent = (value: number) => (Number.isNaN(value) ? 'n/a' : `${(value * 100).toFixed(1)}%`);
const signedPoints = (value: number) =>
  Number.isNaN(value) ? 'n/a' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} pp`;
const signed = (value: number) =>
  Number.isNaN(value) ? 'n/a' : `${value >= 0 ? '+' : ''}${value.toFixed(4)}`;

function differenceLine(
  label: string,
  d: PairedDifference,
  show: (v: number) => string,
  showDiff: (v: number) => string,
): string[] {
  return [
    label,
    show(d.a),
    show(d.b),
    showDiff(d.difference),
    `[${showDiff(d.ci95.low)}, ${showDiff(d.ci95.high)}]`,
  ];
}

export function comparisonText(c: RunComparison): string {
  const lines = [
    `A = ${c.run_a}, B = ${c.run_b}: ${c.paired} tasks settled in both runs`,
    '',
    formatTable(
      ['', 'B passes', 'B fails'],
      [
        ['A passes', String(c.table.both_pass), String(c.table.only_a)],
        ['A fails', String(c.table.only_b), String(c.table.neither)],
      ],
    ),
    formatTable(
      ['', 'A', 'B', 'B − A', '95% CI (paired bootstrap)'],
      [
        differenceLine('success rate', c.success_rate, percent, signedPoints),
        differenceLine(
          'mean reward',
          c.mean_reward,
          (v) => (Number.isNaN(v) ? 'n/a' : v.toFixed(4)),
          signed,
        ),
      ],
    ),
    `McNemar exact p (two-sided, ${c.table.only_a} only A vs ${c.table.only_b} only B): ${c.mcnemar_p.toPrecision(4)}`,
    `bootstrap: ${c.bootstrap.resamples} resamples, seed ${c.bootstrap.seed}`,
    '',
  ];
  if (c.flipped.length) {
    lines.push(`flipped tasks (${c.flipped.length}):`);
    lines.push(
      formatTable(
        ['task', 'domain', 'passes in', 'status A', 'status B'],
        c.flipped.map((t) => [
          t.task_id,
          t.domain,
          t.passed === 'only_a' ? 'A' : 'B',
          t.status_a,
          t.status_b,
        ]),
      ),
    );
  }
  return lines.join('\n');
}

export function configureCompare(command: Command): void {
  command
    .option('--json', 'print the comparison as JSON')
    .option('--resamples <n>', 'bootstrap resamples', String(DEFAULT_BOOTSTRAP.resamples))
    .option(
      '--seed <n>',
      'bootstrap PRNG seed (same seed, same interval)',
      String(DEFAULT_BOOTSTRAP.seed),
    )
    .action(async (runA: string, runB: string, flags: CompareFlags) => {
      const resamples = integerFlag(
        '--resamples',
        flags.resamples,
        1,
        'expected a whole number of resamples of at least 1, e.g. --resamples 10000',
      );
      const seed = integerFlag(
        '--seed',
        flags.seed,
        0,
        'expected a non-negative whole number, e.g. --seed 1',
      );
      await withSchedulerServices({ redis: false }, async ({ db }) => {
        await requireRun(db, runA);
        await requireRun(db, runB);
        const { comparison } = await loadRunComparison(db, runA, runB, { resamples, seed });
        process.stdout.write(
          flags.json ? `${JSON.stringify(comparison)}\n` : comparisonText(comparison),
        );
      });
    });
}
