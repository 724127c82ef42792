import type { Logger } from '@benchfleet/core';
import type { StepRecord, TaskContext } from '@benchfleet/benchmark-kit';
import type { AttemptUsage, OpenedAttempt, StepWriter, TasksRepository } from '@benchfleet/db';
import type { JobContext, TaskPayload } from '@benchfleet/queue';
import type { AttemptSpan } from '@benchfleet/telemetry';
import { AttemptSpend } from './attempt-spend.js';
import { StepClock } from './step-clock.js';
import { stepSpanAttributes, type ActionSummarizer } from './step-span-attributes.js';

/** What the episode's context writes through, for one attempt. */
export interface AttemptWrites {
  steps: StepWriter;
  tasks: TasksRepository;
  span: AttemptSpan;
  /** Tracing is on: each step is a span too. */
  tracing: boolean;
  summarizeAction: ActionSummarizer | undefined;
}

/**
 * The context an episode runs in, and what its attempt did: its steps (to the step writer, stamped
 * as they happen, and as spans), its external id, and its spend so far.
 */
export class AttemptContext {
  readonly spend = new AttemptSpend();
  private stepsSeen = 0;
  private readonly clock = new StepClock();
  private lastStepEnded: number;

  constructor(
    private readonly job: JobContext<TaskPayload>,
    private readonly opened: OpenedAttempt,
    private readonly logger: Logger,
    private readonly writes: AttemptWrites,
    readonly started: number,
  ) {
    this.lastStepEnded = started;
  }

  /** The highest step number the episode recorded. */
  get totalSteps(): number {
    return this.stepsSeen;
  }

  forEpisode(): TaskContext {
    const { job, opened, logger } = this;
    return {
      job,
      task: opened.task,
      attempt: opened.attempt,
      previousExternalId: opened.previousExternalId,
      signal: job.signal,
      logger,
      recordStep: (step) => this.recordStep(step),
      setExternalId: async (externalId) => {
        const { runId, taskId } = job.payload;
        await this.writes.tasks.setExternalId(runId, taskId, opened.attempt, externalId);
      },
      recordUsage: (usage) => this.recordUsage(usage),
    };
  }

  private recordStep(step: StepRecord): void {
    this.stepsSeen = Math.max(this.stepsSeen, step.step);
    this.spend.addStep(step);
    const { runId, taskId } = this.job.payload;
    const at = this.clock.next();
    this.writes.steps.add({
      at,
      ...step,
      run_id: runId,
      task_id: taskId,
      attempt: this.opened.attempt,
    });
    // Reading the action costs a parse per step: only when tracing is on.
    if (this.writes.tracing) {
      // A step that reports no latency (OSWorld's) spans the time since the one before it.
      const ended = Date.now();
      const sinceLast = ended - this.lastStepEnded;
      this.writes.span.recordStep(stepSpanAttributes(step, sinceLast, this.writes.summarizeAction));
      this.lastStepEnded = ended;
    }
  }

  private async recordUsage(usage: AttemptUsage): Promise<void> {
    // Running totals: a late report of an earlier total keeps the larger one.
    if (!this.spend.tell(usage)) return;
    const { runId, taskId } = this.job.payload;
    await this.writes.tasks
      .recordAttemptUsage({ runId, taskId, attempt: this.opened.attempt }, usage)
      .catch((error: unknown) =>
        this.logger.warn(
          { err: error },
          "could not write the attempt's spend so far; its outcome will carry it",
        ),
      );
  }
}
