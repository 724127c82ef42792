import { GroupCommit } from './group-commit.js';
import type { StepWriter } from './steps-repository.js';
import type { SettleRequest, SettleResult, TasksRepository } from './tasks-repository.js';

/** What the batcher needs of the tasks repository. */
export type SettleBatcherTasks = Pick<TasksRepository, 'settleMany' | 'runHasNoOpenTask'>;

/**
 * Outcomes by group commit: the settles that arrive while one statement is under way are written
 * together in the next, with the steps still pending, and each run that got an outcome is asked
 * once per batch, after the commit, whether it has an open task left (that question is answered
 * while the next batch is written). Only the first recorded settle of a run in a batch carries the
 * answer, so a run is summarised once per batch that ends it, not once per outcome in it. A batch
 * Postgres refuses is written again one settle at a time.
 */
export class SettleBatcher {
  private readonly group: GroupCommit<SettleRequest, SettleResult>;

  constructor(tasks: SettleBatcherTasks, steps: StepWriter, maxBatch = 64) {
    this.group = new GroupCommit(
      async (requests) => {
        const recorded = await steps.flushWith((pending) => tasks.settleMany(requests, pending));
        const asked = new Set<string>();
        return requests.map((request, i) => {
          if (!recorded[i]) return { recorded: false, runSettled: false };
          if (asked.has(request.runId)) return { recorded: true, runSettled: false };
          asked.add(request.runId);
          return tasks
            .runHasNoOpenTask(request.runId)
            .then((runSettled) => ({ recorded: true, runSettled }));
        });
      },
      // Two settles of one attempt never share a statement: the first decides.
      {
        maxBatch,
        key: (request) => `${request.runId}\u0000${request.taskId}\u0000${request.attempt}`,
      },
    );
  }

  settle(request: SettleRequest): Promise<SettleResult> {
    return this.group.submit(request);
  }
}
