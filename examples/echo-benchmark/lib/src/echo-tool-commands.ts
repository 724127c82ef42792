import type { Command } from 'commander';
import type { ToolContext } from '@benchfleet/benchmark-kit';

/** `scheduler echo …`: a tool that reads the fleet's database through the scheduler's services. */
export function configureEchoTools(echo: Command, tools: ToolContext): void {
  echo
    .command('steps <run>')
    .description("print the steps an echo run's tasks recorded, one line each")
    .action(async (runId: string) => {
      const steps = await tools.withDatabase((db) =>
        db
          .selectFrom('steps')
          .select(['task_id', 'attempt', 'step', 'text'])
          .where('run_id', '=', runId)
          .orderBy('task_id')
          .orderBy('attempt')
          .orderBy('step')
          .execute(),
      );
      for (const step of steps)
        process.stdout.write(`${step.task_id} ${step.attempt}.${step.step} ${step.text ?? ''}\n`);
    });
}
