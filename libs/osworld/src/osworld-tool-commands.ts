import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { s3SettingsFromEnv } from '@benchfleet/artifacts';
import { formatRegradeReport, type ToolContext } from '@benchfleet/benchmark-kit';
import { checkOutputFile, splitList, UsageError } from '@benchfleet/core';
import { RunsRepository } from '@benchfleet/db';
import {
  formatVerifyGradingReport,
  verifyGradingExitCode,
  verifyGradingFixtures,
} from '@benchfleet/osworld-grading';
import { extractOsworldDataset, writeOsworldDataset } from './osworld-dataset-extraction.js';

/** Mounts the OSWorld tools under `scheduler osworld`. */
export function configureOsworldTools(osworld: Command, context: ToolContext): void {
  osworld
    .command('regrade <run>')
    .description('the same as `scheduler regrade RUN`, for an OSWorld run')
    .option('--task <id>', 'only this task of the run')
    .option('--force', 'grade again even where the latest grade has the current metric version')
    .action(async (runId: string, flags: { task?: string; force?: boolean }) => {
      const s3 = s3SettingsFromEnv(process.env);
      const report = await context.withDatabase(async (db) => {
        const run = await new RunsRepository(db).get(runId);
        if (!run || run.benchmark !== 'osworld')
          throw new UsageError(
            `run ${runId} ${run ? `is a ${run.benchmark} run, not an OSWorld one` : 'not found'}; \`scheduler runs\` lists the runs`,
          );
        const { osworldRegrader } = await import('./osworld-regrade-run.js');
        return osworldRegrader.regrade({
          db,
          run,
          artifacts: s3 ? { s3 } : {},
          ...(flags.task !== undefined ? { taskId: flags.task } : {}),
          force: flags.force === true,
        });
      });
      process.stdout.write(`${formatRegradeReport(report).join('\n')}\n`);
    });

  osworld
    .command('verify-grading')
    .description(
      'run golden-case files made by OSWorld\'s own Python (metric files, _evaluate.json, _getters.json) through the grading port: passed/failed per file, then "N passed, M failed"; exit 1 on a failure, 2 on a malformed file',
    )
    .requiredOption(
      '--fixtures <dir>',
      'a directory of fixture files (e.g. ../shared/osworld/grading/metric-fixtures, or its parent)',
    )
    .action(async (flags: { fixtures: string }) => {
      const report = await verifyGradingFixtures(await fixturesDirOf(flags.fixtures));
      for (const line of formatVerifyGradingReport(report)) process.stdout.write(`${line}\n`);
      process.exitCode = verifyGradingExitCode(report);
    });

  osworld
    .command('extract')
    .description(
      "consolidate OSWorld task files into one dataset JSON (the original scripts' format)",
    )
    .requiredOption(
      '--osworld-dir <dir>',
      'an OSWorld checkout or its evaluation_examples directory',
    )
    .option('--test-all <file>', 'the task list (default: evaluation_examples/test_all.json)')
    .option('--domain <domains...>', 'only these domains (repeatable or comma-separated)', [])
    .option('--output <file>', 'where to write the dataset', 'osworld_dataset.json')
    .action(
      async (flags: { osworldDir: string; testAll?: string; domain: string[]; output: string }) => {
        await checkOutputFile('--output', flags.output);
        const domains = splitList(flags.domain);
        const { dataset, warnings } = await extractOsworldDataset({
          osworldDir: flags.osworldDir,
          ...(flags.testAll ? { testAllFile: flags.testAll } : {}),
          ...(domains.length ? { domains } : {}),
        });
        for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
        await writeOsworldDataset(flags.output, dataset);
        const perDomain = Object.entries(dataset.metadata.domains)
          .map(([domain, n]) => `${domain} ${n}`)
          .join(', ');
        process.stderr.write(
          `extracted ${dataset.metadata.total_tasks} tasks to ${flags.output}: ${perDomain}\n`,
        );
      },
    );
}

/**
 * The folder of fixture files: DIR itself, or DIR/metric-fixtures when DIR is the shared grading
 * folder (README.md beside metric-fixtures/, no fixture file of its own).
 */
async function fixturesDirOf(dir: string): Promise<string> {
  const names = await readdir(dir).catch(() => null);
  if (names && !names.some((name) => name.endsWith('.json')) && names.includes('metric-fixtures'))
    return join(dir, 'metric-fixtures');
  return dir;
}
