import { createCliProgram, runCliProgram } from '@benchfleet/core';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
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
import { registerCompare } from './commands/compare.js';

/**
 * The `scheduler` CLI over a registry of benchmarks: `main.ts` runs it with the fleet's own; a
 * fleet with a benchmark of its own runs it with a registry that adds one.
 */
export async function runSchedulerCli(registry: BenchmarkRegistry, argv: readonly string[]): Promise<void> {
  const program = createCliProgram('scheduler', 'benchfleet scheduler: turns benchmarks into queued jobs, watches, resumes, cancels and summarises runs');
  program.command('migrate').description('apply pending Postgres migrations (a no-op when the schema is current)').action(migrateCommand);
  registerEnqueue(program, registry);
  registerRuns(program);
  registerStatus(program, registry);
  registerAggregate(program, registry);
  registerExport(program, registry);
  registerCompare(program);
  registerCancel(program, registry);
  registerResume(program, registry);
  registerWorker(program, registry);
  registerOsworldCommands(program);
  registerWebshopCommands(program);
  registerDemo(program, registry);
  await runCliProgram(program, argv);
}
