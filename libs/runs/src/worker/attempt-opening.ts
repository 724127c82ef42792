import { RepeatedLog, type Logger } from '@benchfleet/core';
import {
  GroupCommit,
  type OpenAttemptRequest,
  type OpenedAttempt,
  type RunsRepository,
  type TasksRepository,
} from '@benchfleet/db';
import type { JobContext, TaskPayload } from '@benchfleet/queue';
import { lostOutcomesMessage, restoreLostOutcomes, type OutcomeLedger } from '../outcome-ledger.js';
import type { RunBudgetFence } from './run-budget-fence.js';

/** A job's attempt, opened; or what the handler returns instead of running one. */
export type AttemptStart = { opened: OpenedAttempt } | { skipped: unknown };

/**
 * The first step of a task job: an outcome a failover lost is restored (never run again), else an
 * `attempts` row is opened (with other episodes' in one statement); a task with an outcome, or of
 * a run halted at a budget, is not run.
 */
export class AttemptOpening {
  // Episodes start many at a time: their attempts open a batch per statement.
  private readonly opener: GroupCommit<OpenAttemptRequest, OpenedAttempt | undefined>;
  // Outcomes a failover lost, restored here: said once per interval, with the count.
  private readonly restoredLog: RepeatedLog;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly runs: RunsRepository,
    private readonly fence: RunBudgetFence,
    private readonly onRunSettled: (runId: string) => Promise<void>,
    private readonly ledger: OutcomeLedger | undefined,
    logger: Logger,
  ) {
    this.opener = new GroupCommit((requests) => tasks.openAttempts(requests), {
      key: (request) => `${request.runId}\u0000${request.taskId}`,
    });
    this.restoredLog = new RepeatedLog(logger);
  }

  async open(job: JobContext<TaskPayload>): Promise<AttemptStart> {
    const { runId, taskId } = job.payload;
    // A task whose committed outcome Postgres lost (a failover) is given it back, never run again.
    if (this.ledger && (await restoreLostOutcomes(this.tasks, this.ledger, runId, [taskId])) > 0) {
      this.restoredLog.warn('restored', { run: runId, task: taskId }, lostOutcomesMessage(1));
      if (await this.tasks.runHasNoOpenTask(runId)) await this.onRunSettled(runId);
      return { skipped: { restored: true } };
    }
    const opened = await this.opener.submit({
      runId,
      taskId,
      workerId: job.workerId,
      jobAttempt: job.job.attemptsMade + 1,
    });
    return opened ? { opened } : { skipped: await this.notOpened(job) };
  }

  /** Why no attempt opened: the run is halted at a budget, or the task has its outcome. */
  private async notOpened(job: JobContext<TaskPayload>): Promise<unknown> {
    const { runId, taskId } = job.payload;
    const halt = await this.runs.haltOf(runId);
    if (halt?.halt === 'budget') {
      // A task the fence found running between two attempts ends here, when its retry comes.
      const reason = halt.reason ?? 'the run reached its spend limit';
      await this.fence.atSpendLimit(runId, reason, job.logger);
      return { skipped: true, halt: halt.halt };
    }
    if (halt?.halt === 'infra') {
      job.logger.info(
        { task: taskId, run: runId },
        'run is paused on infra errors: task left for `scheduler resume`',
      );
      return { skipped: true, halt: halt.halt };
    }
    job.logger.info(
      { task: taskId },
      'task already has an outcome (or no longer exists): nothing to do',
    );
    return { skipped: true };
  }
}
