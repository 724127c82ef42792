import { Command } from 'commander';
import { migrateCommand } from './commands/migrate.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerRuns } from './commands/runs.js';
import { registerStatus } from './commands/status.js';
import { registerAggregate } from './commands/aggregate.js';
import { registerCancel } from './commands/cancel.js';
import { registerResume } from './commands/resume.js';
import { registerWorker } from './commands/worker.js';
import { registerOsworldCommands } from './commands/osworld-extract.js';
import { registerWebshopCommands } from './commands/webshop.js';
import { registerDemo } from './commands/demo.js';
import { registerExport } from './commands/export.js';

const program = new Command('scheduler')
  .description('benchfleet scheduler: turns benchmarks into queued jobs, watches, resumes, cancels and summarises runs')
  .showHelpAfterError()
  .exitOverride((error) => {
    // commander's own usage errors: it has printed the message already
    process.exit(error.exitCode === 0 ? 0 : 2);
  });

program
  .command('migrate')
  .description('apply pending Postgres migrations (a no-op when the schema is current)')
  .action(migrateCommand);
registerEnqueue(program);
registerRuns(program);
registerStatus(program);
registerAggregate(program);
registerExport(program);
registerCancel(program);
registerResume(program);
registerWorker(program);
registerOsworldCommands(program);
registerWebshopCommands(program);
registerDemo(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Imported here so that starting (and `--help`) does not load it.
  const { failAndExit } = await import('@benchfleet/core');
  failAndExit('scheduler', error, process.env.BENCHFLEET_DEBUG === '1');
}
