import type { ArtifactStore } from '@benchfleet/artifacts';
import {
  RunsRepository,
  StepsRepository,
  TasksRepository,
  type Database,
  type TaskOutcomeRecord,
} from '@benchfleet/db';

// Runs written through the same repositories the workers use, for the dashboard's tests, its
// bench and its README screenshots: attempts opened, steps inserted, outcomes settled.

interface FixtureStep {
  action?: Record<string, unknown>;
  text?: string;
  observation?: string;
  reward?: number;
  screenshot?: Buffer;
  tokensIn?: number;
  tokensOut?: number;
  latencyMs?: number;
}

interface FixtureAttempt {
  worker?: string;
  steps: FixtureStep[];
  /** Omitted: the attempt stays running. */
  outcome?: Omit<TaskOutcomeRecord, 'totalSteps'> & { totalSteps?: number };
  /** False for an attempt that failed and was retried (an infrastructure error). */
  final?: boolean;
}

export interface FixtureTask {
  taskId: string;
  domain: string;
  instruction: string;
  spec?: Record<string, unknown>;
  /** None: the task stays queued. */
  attempts?: FixtureAttempt[];
}

/** An OSWorld task of two steps that succeeded on its first attempt (the model-input tests' task). */
export const TWO_STEP_OSWORLD_TASK: Omit<FixtureTask, 'taskId'> = {
  domain: 'os',
  instruction: 'open the terminal',
  attempts: [
    {
      steps: [
        { action: { tool_calls: [] }, text: 'one' },
        { action: { tool_calls: [] }, text: 'two' },
      ],
      outcome: {
        status: 'success',
        finalApiStatus: 'COMPLETED',
        success: true,
        reward: 1,
        durationMs: 1_000,
        error: null,
        result: { stop_reason: 'end_status' },
      },
    },
  ],
};

export interface FixtureRun {
  id: string;
  name: string;
  benchmark: string;
  config?: Record<string, unknown>;
  model?: Record<string, unknown> | null;
  agent?: Record<string, unknown> | null;
  /** `runs.limits`: spend limits, the infra-error budget, the model's price. */
  limits?: Record<string, unknown>;
  tasks: FixtureTask[];
}

export async function writeFixtureRun(
  db: Database,
  artifacts: ArtifactStore,
  run: FixtureRun,
): Promise<void> {
  await new RunsRepository(db).createWithTasks({
    run: {
      id: run.id,
      name: run.name,
      benchmark: run.benchmark,
      config: JSON.stringify(run.config ?? {}),
      model: run.model ? JSON.stringify(run.model) : null,
      agent: run.agent ? JSON.stringify(run.agent) : null,
      code_version: 'fixture',
      limits: run.limits ? JSON.stringify(run.limits) : null,
    },
    tasks: run.tasks.map((task, seq) => ({
      task_id: task.taskId,
      seq,
      domain: task.domain,
      instruction: task.instruction,
      spec: JSON.stringify(task.spec ?? {}),
    })),
  });
  for (const task of run.tasks) {
    for (const [i, fixture] of (task.attempts ?? []).entries())
      await writeFixtureAttempt(db, artifacts, run.id, task.taskId, fixture, i + 1);
  }
}

/** Opens the task's next attempt, writes its steps (screenshots to the store) and settles it. */
async function writeFixtureAttempt(
  db: Database,
  artifacts: ArtifactStore,
  runId: string,
  taskId: string,
  fixture: FixtureAttempt,
  jobAttempt = 1,
): Promise<number> {
  const tasks = new TasksRepository(db);
  const opened = await tasks.openAttempt(
    runId,
    taskId,
    fixture.worker ?? 'fixture-worker',
    jobAttempt,
  );
  if (!opened) throw new Error(`task ${taskId} of run ${runId} is not open`);
  const { attempt } = opened;
  const rows = [];
  for (const [i, step] of fixture.steps.entries()) {
    const number = i + 1;
    const screenshotUri = step.screenshot
      ? await artifacts.put(
          [runId, taskId, `attempt-${attempt}`, `step_${String(number).padStart(3, '0')}.png`],
          step.screenshot,
        )
      : null;
    rows.push({
      run_id: runId,
      task_id: taskId,
      attempt,
      step: number,
      action: step.action ? JSON.stringify(step.action) : null,
      text: step.text ?? null,
      observation: step.observation ?? null,
      reward: step.reward ?? null,
      screenshot_uri: screenshotUri,
      tokens_in: step.tokensIn ?? 0,
      tokens_out: step.tokensOut ?? 0,
      latency_ms: step.latencyMs ?? null,
    });
  }
  await new StepsRepository(db).insertMany(rows);
  if (fixture.outcome) {
    await tasks.settle(
      runId,
      taskId,
      attempt,
      { totalSteps: fixture.steps.length, ...fixture.outcome },
      fixture.final ?? true,
    );
  }
  return attempt;
}
