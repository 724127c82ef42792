import {
  AttemptsRepository,
  StepsRepository,
  type Attempt,
  type Database,
  type Task,
  type TimedStep,
} from '@benchfleet/db';

// The exports that write trajectories (ATIF, Harbor) read a run a page of tasks at a time: the
// page's attempts in one statement, their steps in another.

/** One page of tasks, with the attempts read of them and those attempts' steps. */
export interface AttemptPage {
  readonly tasks: readonly Task[];
  /** The task's attempts that were read, in attempt order. */
  attemptsOf(task: Task): readonly Attempt[];
  /** The attempt's steps, in step order. */
  stepsOf(attempt: Attempt): readonly TimedStep[];
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

const attemptKey = (taskId: string, attempt: number) => `${taskId}\n${attempt}`;

/**
 * The run's tasks a page at a time, with their attempts (those `keep` takes; default all) and the
 * steps of those attempts.
 */
export async function* attemptPages(
  db: Database,
  runId: string,
  tasks: readonly Task[],
  options: { pageSize: number; keep?: (task: Task, attempt: Attempt) => boolean },
): AsyncGenerator<AttemptPage> {
  for (let start = 0; start < tasks.length; start += options.pageSize) {
    const page = tasks.slice(start, start + options.pageSize);
    const byId = new Map(page.map((task) => [task.task_id, task]));
    const read = await new AttemptsRepository(db).listOfTasks(runId, [...byId.keys()]);
    const keep = options.keep;
    const attempts = keep
      ? read.filter((attempt) => {
          const task = byId.get(attempt.task_id);
          return task !== undefined && keep(task, attempt);
        })
      : read;
    const steps = await new StepsRepository(db).listOfAttempts(
      runId,
      attempts.map((attempt) => ({ taskId: attempt.task_id, attempt: attempt.attempt })),
    );
    const attemptsByTask = groupBy(attempts, (attempt) => attempt.task_id);
    const stepsByAttempt = groupBy(steps, (step) => attemptKey(step.task_id, step.attempt));
    yield {
      tasks: page,
      attemptsOf: (task) => attemptsByTask.get(task.task_id) ?? [],
      stepsOf: (attempt) => stepsByAttempt.get(attemptKey(attempt.task_id, attempt.attempt)) ?? [],
    };
  }
}
