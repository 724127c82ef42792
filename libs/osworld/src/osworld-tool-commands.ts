import type { Command } from 'commander';
import { checkOutputFile, splitList } from '@benchfleet/core';
import { extractOsworldDataset, writeOsworldDataset } from './osworld-dataset-extraction.js';

/** Mounts the OSWorld tools under `scheduler osworld`. */
export function configureOsworldTools(osworld: Command): void {
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
