import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  attemptGradeKey,
  type ExportContext,
  type GradeRecord,
  type RunExporter,
} from '@benchfleet/benchmark-kit';
import { TasksRepository, type Attempt, type Run, type Task, type TimedStep } from '@benchfleet/db';
import { copyAttemptScreenshots } from './atif-images.js';
import { ATIF_INPUTS_DIR, exportModelInputs, type AtifModelInputs } from './atif-model-inputs.js';
import { attemptPages, type AttemptPage } from './attempt-pages.js';
import { parseAtifTrajectory } from './atif-reader.js';
import { ATIF_SCHEMA_VERSION } from './atif-schema.js';
import { atifTrajectoryOfAttempt, isFinalAttempt, taskHasOutcome } from './atif-trajectory.js';

// `scheduler export RUN --format atif`, for a run of any benchmark. Layout:
//   index.json                               the run, and every task with its attempts' files
//   tasks/<task_id>/attempt-<n>.json         one ATIF trajectory per attempt of a task with an outcome
//   tasks/<task_id>/images/attempt-<n>-step-<NNN>.png   screenshots, referenced by relative path
//   inputs/<sha256>.json|.png                each distinct LLM input (message, tools, image) once
//   export_problems.json                     only when something could not be exported
// Task directories sit under tasks/ so that no task id can collide with the index.

const ATIF_INDEX_FILE = 'index.json';
const ATIF_PROBLEMS_FILE = 'export_problems.json';
const ATIF_TASKS_DIR = 'tasks';
/** Tasks whose attempts and steps are read by one statement each. */
export const ATIF_EXPORT_PAGE = 20;

interface AtifIndexAttempt {
  attempt: number;
  status: Attempt['status'];
  final: boolean;
  /** The trajectory, relative to the export directory. */
  file: string;
  steps: number;
  images: number;
}

export interface AtifIndex {
  format: 'benchfleet-atif-export';
  format_version: 1;
  atif_schema_version: typeof ATIF_SCHEMA_VERSION;
  run: {
    id: string;
    name: string;
    benchmark: string;
    status: string;
    code_version: string;
    epochs: number;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
  };
  tasks_exported: number;
  tasks_unfinished: number;
  trajectories: number;
  images: number;
  /** Files under inputs/: each distinct message, tools list and image the exported calls sent. */
  model_inputs: { dir: typeof ATIF_INPUTS_DIR; files: number };
  problems: number;
  tasks: Array<{
    task_id: string;
    /** The benchmark's task id and the sample (`enqueue --epochs`; epoch 1 otherwise). */
    base_task_id: string;
    epoch: number;
    domain: string;
    status: Task['status'];
    attempts: AtifIndexAttempt[];
  }>;
}

/** What an ATIF export has written so far, for its index. */
class AtifExportTally {
  trajectories = 0;
  images = 0;
  inputFiles = 0;
  /** Model inputs already written (each distinct one once). */
  readonly inputsWritten = new Set<string>();
  readonly problems: string[] = [];
  readonly tasks: AtifIndex['tasks'] = [];
}

/** What one page's trajectories carry besides their rows: the calls' inputs, and the grades. */
interface PageExtras {
  modelInputs: AtifModelInputs;
  /** Only for a graded run: its attempts' grades. */
  grades: ReadonlyMap<string, GradeRecord> | undefined;
}

export const atifExporter: RunExporter<unknown> = {
  description: `${ATIF_SCHEMA_VERSION} trajectories (Harbor's Agent Trajectory Interchange Format), one per task attempt: ${ATIF_TASKS_DIR}/<task_id>/attempt-<n>.json, screenshots in ${ATIF_TASKS_DIR}/<task_id>/images/, and ${ATIF_INDEX_FILE}`,
  signatureFile: ATIF_INDEX_FILE,
  async write(context) {
    const { db, run, dir } = context;
    const tasks = await new TasksRepository(db).listByRun(run.id);
    const settled = tasks.filter(taskHasOutcome);
    const tally = new AtifExportTally();
    // A graded run's attempts carry their grade; any other run's trajectories stay as they were.
    const grades =
      context.grading && context.summary.graded
        ? await context.grading.attemptGrades(db, run.id)
        : undefined;
    for await (const page of attemptPages(db, run.id, settled, { pageSize: ATIF_EXPORT_PAGE })) {
      const taskIds = page.tasks.map((task) => task.task_id);
      const inputs = await exportModelInputs(db, run.id, taskIds, dir, tally.inputsWritten);
      tally.inputFiles += inputs.files;
      for (const task of page.tasks) {
        const extras = { modelInputs: inputs.inputs, grades };
        tally.tasks.push(await writeTaskTrajectories(context, page, task, extras, tally));
        context.progress(tally.tasks.length, settled.length);
      }
    }
    const index = atifIndex(run, tasks.length, settled.length, tally);
    await writeFile(path.join(dir, ATIF_INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
    const { problems } = tally;
    if (problems.length > 0)
      await writeFile(
        path.join(dir, ATIF_PROBLEMS_FILE),
        `${JSON.stringify({ problems }, null, 2)}\n`,
      );
    return { exported: settled.length, unfinished: tasks.length - settled.length, problems };
  },
};

/** A task's directory with one trajectory per attempt, and its entry in the index. */
async function writeTaskTrajectories(
  context: ExportContext<unknown>,
  page: AttemptPage,
  task: Task,
  extras: PageExtras,
  tally: AtifExportTally,
): Promise<AtifIndex['tasks'][number]> {
  await mkdir(path.join(context.dir, ATIF_TASKS_DIR, task.task_id), { recursive: true });
  const attempts: AtifIndexAttempt[] = [];
  for (const attempt of page.attemptsOf(task))
    attempts.push(
      await writeAttemptTrajectory(context, task, attempt, page.stepsOf(attempt), extras, tally),
    );
  return {
    task_id: task.task_id,
    base_task_id: task.base_task_id,
    epoch: task.epoch,
    domain: task.domain,
    status: task.status,
    attempts,
  };
}

/** One attempt's trajectory, its screenshots copied beside it, checked against the schema and written. */
async function writeAttemptTrajectory(
  context: ExportContext<unknown>,
  task: Task,
  attempt: Attempt,
  steps: readonly TimedStep[],
  extras: PageExtras,
  tally: AtifExportTally,
): Promise<AtifIndexAttempt> {
  const taskDir = path.join(context.dir, ATIF_TASKS_DIR, task.task_id);
  const where = `task ${task.task_id} attempt ${attempt.attempt}`;
  // A screenshot that cannot be had is a problem, not a failure.
  const screenshots = await copyAttemptScreenshots(steps, {
    artifacts: context.artifacts,
    dir: taskDir,
    name: (step) => `images/attempt-${attempt.attempt}-step-${String(step.step).padStart(3, '0')}`,
    where: (step) => `${where} step ${step.step}`,
    problems: tally.problems,
  });
  const images = [...screenshots.values()].filter((shot) => 'path' in shot).length;
  tally.images += images;
  const { grades } = extras;
  const trajectory = atifTrajectoryOfAttempt({
    run: context.run,
    task,
    attempt,
    steps,
    screenshots,
    modelInputs: extras.modelInputs.get(`${task.task_id}\n${attempt.attempt}`) ?? new Map(),
    ...(grades
      ? { grade: grades.get(attemptGradeKey(task.task_id, attempt.attempt))?.record ?? null }
      : {}),
  });
  const name = `attempt-${attempt.attempt}.json`;
  // Checked against the schema before it is written: a file this writes is one a reader takes.
  parseAtifTrajectory(trajectory, `the trajectory of ${where}`);
  await writeFile(path.join(taskDir, name), `${JSON.stringify(trajectory, null, 2)}\n`);
  tally.trajectories += 1;
  return {
    attempt: attempt.attempt,
    status: attempt.status,
    final: isFinalAttempt(task, attempt),
    file: `${ATIF_TASKS_DIR}/${task.task_id}/${name}`,
    steps: steps.length,
    images,
  };
}

function atifIndex(run: Run, tasks: number, exported: number, tally: AtifExportTally): AtifIndex {
  return {
    format: 'benchfleet-atif-export',
    format_version: 1,
    atif_schema_version: ATIF_SCHEMA_VERSION,
    run: {
      id: run.id,
      name: run.name,
      benchmark: run.benchmark,
      status: run.status,
      code_version: run.code_version,
      epochs: run.epochs,
      created_at: run.created_at.toISOString(),
      started_at: run.started_at?.toISOString() ?? null,
      finished_at: run.finished_at?.toISOString() ?? null,
    },
    tasks_exported: exported,
    tasks_unfinished: tasks - exported,
    trajectories: tally.trajectories,
    images: tally.images,
    model_inputs: { dir: ATIF_INPUTS_DIR, files: tally.inputFiles },
    problems: tally.problems.length,
    tasks: tally.tasks,
  };
}
