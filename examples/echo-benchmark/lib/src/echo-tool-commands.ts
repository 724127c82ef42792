import type { Command } from 'commander';
import type { ToolContext } from '@benchfleet/benchmark-kit';
import { StepsRepository } from '@benchfleet/db';

/** `scheduler echo …`: a tool that reads the fleet's database through the scheduler's services. */
export function configureEchoTools(echo: Command, tools: ToolContext): void {
  echo
    .command('steps <run>')
    .description("print the steps an echo run's tasks recorded, one line each")
    .action(async (runId: string) => {
      const steps = await tools.withDatabase((db) => new StepsRepository(db).listByRun(runId));
      for (const step of steps)
        process.stdout.write(`${step.task_id} ${step.attempt}.${step.step} ${step.text ?? ''}\n`);
    });
}
