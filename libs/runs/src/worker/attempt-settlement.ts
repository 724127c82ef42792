import { errorMessage, redactSecrets, type Logger } from '@benchfleet/core';
import type { SettleBatcher, TaskOutcomeRecord, TasksRepository } from '@benchfleet/db';
import { outageOf, ServiceOutageError, type JobContext, type TaskPayload } from '@benchfleet/queue';
import type { AttemptOutcome, AttemptSpan } from '@benchfleet/telemetry';
import { recordInLedger, type OutcomeLedger } from '../outcome-ledger.js';
import type { PendingAttemptRecords } from './attempt-records.js';

/** What every attempt's settlement shares (one per task job handler). */
export interface SettlementResources {
  tasks: TasksRepository;
  settler: SettleBatcher;
  records: PendingAttemptRecords;
  ledger: OutcomeLedger | undefined;
  onRunSettled(runId: string): Promise<void>;
  onOutcome:
    | ((outcome: {
        status: string;
        totalSteps: number;
        tokensIn: number;
        tokensOut: number;
      }) => void)
    | undefined;
}

/** An outcome as the attempt's span says it: what is written to Postgres, and why it stopped. */
function spanOutcome(outcome: TaskOutcomeRecord): AttemptOutcome {
  return {
    status: outcome.status,
    errorClass: outcome.errorClass ?? null,
    success: outcome.success ?? null,
    reward: outcome.reward ?? null,
    totalSteps: outcome.totalSteps,
    tokensIn: outcome.tokensIn ?? null,
    tokensOut: outcome.tokensOut ?? null,
    costUsd: outcome.costUsd ?? null,
    stopReason: outcome.finalApiStatus ?? null,
    error: outcome.error ?? null,
  };
}

/**
 * The last step of an attempt: its outcome (and the task's, when final) written with the steps
 * still pending in one statement, with other episodes' outcomes; kept for later when Postgres does
 * not take it; and the attempt's cause written when the task moved on meanwhile.
 */
export class AttemptSettlement {
  private readonly runId: string;
  private readonly taskId: string;

  constructor(
    private readonly resources: SettlementResources,
    private readonly job: JobContext<TaskPayload>,
    private readonly attempt: number,
    private readonly span: AttemptSpan,
    private readonly logger: Logger,
  ) {
    ({ runId: this.runId, taskId: this.taskId } = job.payload);
  }

  /** Writes the outcome; tells the ledger, the metrics and the run's aggregate what it settled. */
  private async settle(outcome: TaskOutcomeRecord, final: boolean) {
    const { runId, taskId, attempt, resources } = this;
    const result = await resources.settler.settle({
      runId,
      taskId,
      attempt,
      outcome,
      taskFinal: final,
    });
    if (result.recorded && final) {
      const entry = {
        runId,
        taskId,
        attempt,
        workerId: this.job.workerId,
        at: new Date(),
        outcome,
      };
      await recordInLedger(resources.ledger, [entry], this.logger);
    }
    if (result.recorded) {
      resources.onOutcome?.({
        status: outcome.status,
        totalSteps: outcome.totalSteps,
        tokensIn: outcome.tokensIn ?? 0,
        tokensOut: outcome.tokensOut ?? 0,
      });
    }
    if (result.runSettled) await resources.onRunSettled(runId);
    return result;
  }

  /**
   * The outcome of a failed attempt: settled, or when Postgres does not take it kept to be written
   * when it does (`cause` is what the attempt says if by then its outcome no longer can be).
   * Resolves to the settle's error, or undefined once written.
   */
  async settleOrKeep(
    outcome: TaskOutcomeRecord,
    final: boolean,
    cause = outcome.error ?? `${outcome.status}`,
  ): Promise<unknown> {
    const { runId, taskId, attempt } = this;
    const at = new Date();
    this.span.setOutcome(spanOutcome(outcome));
    try {
      await this.settle(outcome, final);
      if (outcome.errorClass === 'infra') this.tellRecorded(outcome, final, 'is recorded');
      // A later attempt may have taken the task meanwhile and presumed this worker lost.
      if (outcome.status === 'error' && outcome.errorClass === 'infra')
        await this.resources.tasks.recordAttemptCause(runId, taskId, attempt, cause, at);
      return undefined;
    } catch (error) {
      this.resources.records.keep(
        { runId, taskId, attempt, outcome, taskFinal: final },
        cause,
        error,
      );
      if (outcome.errorClass === 'infra')
        this.tellRecorded(outcome, final, 'is kept, for Postgres to take later,');
      return error;
    }
  }

  /** An attempt ended by a fault may be handed back: the runtime's log says what was recorded. */
  private tellRecorded(outcome: TaskOutcomeRecord, final: boolean, verb: string): void {
    const handedBack = outcome.error?.startsWith('handed back') === true ? ' (handed back)' : '';
    this.job.tellRecorded(
      `its attempt ${this.attempt} ${verb} as an infra error${handedBack}${final ? ", the task's outcome" : ''}`,
    );
  }

  /**
   * The outcome the episode returned, the task's: written, or kept and the job handed back when
   * Postgres does not take it (thrown); when the task was taken again before it came, the
   * attempt says so. Resolves to whether it was recorded.
   */
  async settleReturned(record: TaskOutcomeRecord): Promise<boolean> {
    const { runId, taskId, attempt, resources } = this;
    this.span.setOutcome(spanOutcome(record));
    let recorded: boolean;
    try {
      ({ recorded } = await this.settle(record, true));
    } catch (settleError) {
      // The outcome is kept and written when Postgres takes it; if the task has run again by then,
      // the attempt says its outcome could not be written, and why.
      const why = redactSecrets(errorMessage(settleError));
      resources.records.keep(
        { runId, taskId, attempt, outcome: record, taskFinal: true },
        `its outcome (${record.status}) could not be written before the task ran again: ${why}`,
        settleError,
      );
      const outage = await this.job.outage(settleError);
      throw outage ? new ServiceOutageError(outage) : settleError;
    }
    if (!recorded) await this.recordTakenAgain(record);
    return recorded;
  }

  /**
   * The task was taken again before this outcome came (its lock lapsed while the worker could not
   * reach Redis, or the worker handed it back): the attempt says so instead of "worker lost".
   */
  private async recordTakenAgain(record: TaskOutcomeRecord): Promise<void> {
    const { runId, taskId, attempt, resources } = this;
    const outage = outageOf(this.job.signal) ?? (await this.job.outage().catch(() => null));
    const cause = `its outcome (${record.status}) came after the task was taken again${outage ? ` (handed back: ${outage})` : ''}`;
    await resources.tasks
      .recordAttemptCause(runId, taskId, attempt, cause, new Date())
      .catch((error: unknown) =>
        resources.records.keep(
          { runId, taskId, attempt, outcome: record, taskFinal: true },
          cause,
          error,
        ),
      );
  }
}
