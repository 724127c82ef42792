import type { Logger } from '@benchfleet/core';
import type { RunsRepository, TasksRepository } from '@benchfleet/db';

/** The run-level budgets an attempt's end may spend: the run's spend limit and its infra-error budget. */
export class RunBudgetFence {
  constructor(
    private readonly runs: RunsRepository,
    private readonly tasks: TasksRepository,
    /** Called once, by whoever saw the run's last task settle. */
    private readonly onRunSettled: (runId: string) => Promise<void>,
  ) {}

  /**
   * The run-level fence at a spend limit: no new task of the run, its open tasks that no attempt
   * runs end with `budget` (one conditional statement; whoever comes later ends what is left).
   */
  async atSpendLimit(runId: string, reason: string, logger: Logger): Promise<void> {
    const { fenced, tasksEnded } = await this.runs.haltForBudget(runId, reason);
    if (fenced)
      logger.warn({ run: runId, tasksEnded }, `run stopped at its spend limit: ${reason}`);
    if (tasksEnded > 0 && (await this.tasks.runHasNoOpenTask(runId)))
      await this.onRunSettled(runId);
  }

  /** After an infra failure: the run pauses if its infra-error budget is spent (said once, by the worker that paused it). */
  async checkInfraErrors(runId: string, logger: Logger): Promise<void> {
    const paused = await this.runs.haltOnInfraErrors(runId).catch((error: unknown) => {
      logger.warn({ err: error }, "could not check the run's infra-error budget");
      return undefined;
    });
    if (paused) {
      const { reason, ...numbers } = paused;
      logger.warn({ run: runId, ...numbers }, reason);
    }
  }
}
