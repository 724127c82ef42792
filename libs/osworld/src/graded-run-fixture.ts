import { RunsRepository, TasksRepository, type Database } from '@benchfleet/db';
import {
  finalSignalOf,
  OSWORLD_GRADING_VERSION,
  type TaskFidelity,
} from '@benchfleet/osworld-grading';
import { FINAL_SIGNAL_MAPPING_ID, type OsworldGrade } from './osworld-grade.js';
import { OsworldGradesRepository } from './osworld-grades-repository.js';

// Tests' graded OSWorld runs: real rows written through the repositories the worker uses (the
// attempt opened, its grade recorded while it runs, then settled), with grades made by hand.

export interface FixtureGradedTask {
  readonly taskId: string;
  readonly domain: string;
  /** What Bytebot said: COMPLETED is the agent's claim of success. */
  readonly finalApiStatus: 'COMPLETED' | 'NEEDS_HELP' | 'FAILED' | 'CANCELLED';
  /** The grade: a score, or no score for this cause; `null` leaves the task without a grade. */
  readonly grade: { score: number } | { noScore: string } | null;
  readonly fidelity?: TaskFidelity;
  readonly steps?: number;
  readonly metricVersion?: string;
}

const statusOf = (api: FixtureGradedTask['finalApiStatus']) =>
  api === 'COMPLETED' ? 'success' : api === 'CANCELLED' ? 'cancelled' : 'failed';

/** A hand-made grade of the shape the worker records. */
export function fixtureGrade(task: FixtureGradedTask): OsworldGrade | null {
  if (task.grade === null) return null;
  const finalSignal = finalSignalOf(task.finalApiStatus);
  const common = {
    fidelity: task.fidelity ?? { level: 'graded' as const },
    metricVersion: task.metricVersion ?? OSWORLD_GRADING_VERSION,
    finalSignal,
    finalSignalMapping: FINAL_SIGNAL_MAPPING_ID,
    details: { finalSignal, postconfig: null, trace: [] },
    endState: [
      {
        name: 'result.txt',
        sha256: '0'.repeat(64),
        size: 3,
        uri: `file:///fixture/${task.taskId}/result.txt`,
      },
    ],
  };
  return 'score' in task.grade
    ? {
        ...common,
        score: task.grade.score,
        pythonType: 'float',
        gradedSuccess: task.grade.score === 1,
        noScoreCause: null,
        reason: null,
      }
    : {
        ...common,
        score: null,
        pythonType: null,
        gradedSuccess: null,
        noScoreCause: 'exception',
        reason: task.grade.noScore,
      };
}

/** Writes an OSWorld run whose tasks are settled with the agent's word and, where given, a grade. */
export async function writeGradedOsworldRun(
  db: Database,
  run: { id: string; name?: string; graded?: boolean },
  tasks: readonly FixtureGradedTask[],
): Promise<void> {
  const config =
    run.graded === false
      ? { grade: false }
      : {
          grade: true,
          grading: {
            version: OSWORLD_GRADING_VERSION,
            final_signal_mapping: FINAL_SIGNAL_MAPPING_ID,
          },
        };
  await new RunsRepository(db).createWithTasks({
    run: {
      id: run.id,
      name: run.name ?? run.id,
      benchmark: 'osworld',
      code_version: 'test',
      config: JSON.stringify(config),
    },
    tasks: tasks.map((task, seq) => ({
      task_id: task.taskId,
      seq,
      domain: task.domain,
      instruction: `Task ${task.taskId}`,
      spec: JSON.stringify({}),
    })),
  });
  const repository = new TasksRepository(db);
  const grades = new OsworldGradesRepository(db);
  for (const task of tasks) {
    const opened = await repository.openAttempt(run.id, task.taskId, 'stack-1', 1);
    if (!opened) throw new Error(`could not open an attempt of ${task.taskId}`);
    const grade = fixtureGrade(task);
    if (grade)
      await grades.recordAttemptGrade(
        { runId: run.id, taskId: task.taskId, attempt: opened.attempt },
        grade,
        null,
      );
    const status = statusOf(task.finalApiStatus);
    await repository.settle(run.id, task.taskId, opened.attempt, {
      status,
      finalApiStatus: task.finalApiStatus,
      success: status === 'success',
      totalSteps: task.steps ?? 3,
      durationMs: 10_000,
    });
  }
}
