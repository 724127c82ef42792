import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { v5 as uuidV5 } from 'uuid';
import {
  attemptGradeKey,
  type ExportContext,
  type GradeRecord,
  type RunExporter,
} from '@benchfleet/benchmark-kit';
import { TasksRepository, type Attempt, type Run, type Task, type TimedStep } from '@benchfleet/db';
import { copyAttemptScreenshots } from './atif-images.js';
import { attemptPages, type AttemptPage } from './attempt-pages.js';
import { parseAtifTrajectory } from './atif-reader.js';
import {
  atifTrajectoryOfAttempt,
  isFinalAttempt,
  taskHasOutcome,
  type AtifScreenshot,
} from './atif-trajectory.js';
import {
  harborJobConfigSchema,
  harborJobResultSchema,
  harborTrialConfigSchema,
  harborTrialResultSchema,
  type HarborEvalStats,
  type HarborJobResult,
  type HarborTrialResult,
} from './harbor-models.js';

// `scheduler export RUN --format harbor`: the run as a Harbor job directory, so that Harbor's own
// tools (`harbor view`, its job summaries) read it. The mapping, written down once:
// - the run is the job: its id is the job id, its name the job name; the export directory is the
//   job directory (config.json, result.json, one directory per trial, and benchfleet.json);
// - each sample of a task with an outcome (each epoch: `enqueue --epochs`, Harbor's n_attempts) is
//   one trial, from its final attempt (retries after infra faults are not trials: Harbor's own
//   retries replace a trial too). Its name is Harbor's form,
//   `<task name, 32 chars>__<7 chars>`, the 7 chars derived from run and sample (not random), so an
//   export written twice is the same; its id is a UUID v5 of the same; its trial_uri is that name,
//   relative to the job directory (Harbor writes an absolute file URI; a relative one stays right
//   when the export is moved or downloaded as a zip);
// - the task is a local task `<benchmark>/<task id>` (its name: the benchmark's task id, the same in
//   every epoch; source: the benchmark);
//   task_checksum is the SHA-256 of the task's stored spec;
// - the reward (`verifier_result.rewards.reward`): a graded run's grade of the final attempt; else
//   the task's reward, or 1 / 0 for success where the benchmark has no reward (agent-reported);
//   `agent_claimed` (1 / 0) beside it in a graded run. A task that ended without the agent's
//   outcome (infra fault, spend limit, cancel) has no verifier result and an exception_info naming
//   its class and cause instead;
// - agent_result holds the task's spend over every attempt (what the provider was paid for it);
//   tokens are left out for a run that uses no LLM;
// - agent_execution is the final attempt's start and end; the other phases are not recorded.
// What Harbor has no field for is in benchfleet.json (run, trial → task and attempts, problems).

const JOB_CONFIG_FILE = 'config.json';
const JOB_RESULT_FILE = 'result.json';
const INDEX_FILE = 'benchfleet.json';
/** Tasks whose attempts and steps are read by one statement each. */
const PAGE = 20;
/** ShortUUID's alphabet, which Harbor's trial names use. */
const TRIAL_SUFFIX_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** The namespace of the UUIDs Harbor's files need: v5 of `job/<run id>` and `trial/<run id>/<task id>`. */
const HARBOR_ID_NAMESPACE = 'f0d4a4b1-3c52-4f0e-9a55-6a1f3b0c2e71';

/** The job id of a run (run ids are not UUIDs; Harbor's are). */
export const harborJobId = (runId: string): string => uuidV5(`job/${runId}`, HARBOR_ID_NAMESPACE);

/** A string field of a JSON object column, if it is one. */
function stringField(value: Record<string, unknown> | null, key: string): string | undefined {
  const field = value?.[key];
  return typeof field === 'string' ? field : undefined;
}

/**
 * Harbor's trial name for a task row of a run: `<task name>__<suffix>`, the name the benchmark's
 * task id (the same in every epoch), the suffix fixed by run and row (each epoch its own).
 */
export function harborTrialName(runId: string, rowId: string, taskName = rowId): string {
  const digest = createHash('sha256').update(`${runId}/${rowId}`).digest();
  const suffix = [...digest.subarray(0, 7)]
    .map((byte) => TRIAL_SUFFIX_ALPHABET[byte % TRIAL_SUFFIX_ALPHABET.length])
    .join('');
  return `${taskName.slice(0, 32).replace(/[_-]+$/, '')}__${suffix}`;
}

/** A task row's trial name. */
const trialNameOf = (runId: string, task: Task) =>
  harborTrialName(runId, task.task_id, task.base_task_id);

interface TrialRecords {
  readonly run: Run;
  readonly task: Task;
  readonly final: Attempt;
  readonly steps: readonly TimedStep[];
  readonly screenshots: ReadonlyMap<number, AtifScreenshot>;
  /** A graded run's grade of the final attempt (null: none); undefined for a run that is not graded. */
  readonly grade: GradeRecord | null | undefined;
}

/** The trial's named rewards; null when the task has no outcome of the agent's to reward. */
function rewardsOf(
  task: Task,
  grade: GradeRecord | null | undefined,
): Record<string, number> | null {
  if (task.status !== 'success' && task.status !== 'failed') return null;
  const claimed = task.success === true ? 1 : 0;
  if (grade !== undefined) {
    if (grade === null || grade.score === null) return null;
    return { reward: grade.score, agent_claimed: claimed };
  }
  return { reward: task.reward ?? claimed };
}

function exceptionOf(task: Task, rewards: Record<string, number> | null, at: Date) {
  if (rewards !== null) return null;
  const type =
    task.status === 'cancelled'
      ? 'CancelledError'
      : task.status === 'success' || task.status === 'failed'
        ? 'NotGraded'
        : `${task.error_class ?? 'unknown'}_error`;
  return {
    exception_type: type,
    exception_message:
      task.error ??
      (type === 'NotGraded' ? 'the attempt has no grade with a score' : `task ${task.status}`),
    exception_traceback: '',
    occurred_at: at.toISOString(),
  };
}

function trialResultOf(records: TrialRecords, trajectoryAgent: { name: string; version: string }) {
  const { run, task, final, grade } = records;
  const trialName = trialNameOf(run.id, task);
  const rewards = rewardsOf(task, grade);
  const finishedAt = final.finished_at ?? task.finished_at ?? final.started_at;
  const modelName = stringField(run.model, 'name');
  const provider = stringField(run.model, 'provider') ?? 'unknown';
  const usesLlm = run.model !== null;
  const config = {
    task: { path: `${run.benchmark}/${task.base_task_id}`, source: run.benchmark },
    trial_name: trialName,
    trials_dir: '.',
    timeout_multiplier: 1,
    agent: { name: trajectoryAgent.name, model_name: modelName ?? null, kwargs: {} },
    job_id: harborJobId(run.id),
  };
  const result: HarborTrialResult = {
    id: uuidV5(`trial/${run.id}/${task.task_id}`, HARBOR_ID_NAMESPACE),
    task_name: task.base_task_id,
    trial_name: trialName,
    // Relative to the job directory: an export moved or downloaded as a zip stays right.
    trial_uri: trialName,
    task_id: { path: `${run.benchmark}/${task.base_task_id}` },
    source: run.benchmark,
    task_checksum: createHash('sha256').update(JSON.stringify(task.spec)).digest('hex'),
    config,
    agent_info: {
      ...trajectoryAgent,
      model_info: modelName !== undefined ? { name: modelName, provider } : null,
    },
    agent_result: {
      ...(usesLlm ? { n_input_tokens: task.tokens_in, n_output_tokens: task.tokens_out } : {}),
      cost_usd: task.cost_usd,
      metadata: { attempts: task.attempts, spend_of: 'every attempt of the task' },
    },
    verifier_result: rewards === null ? null : { rewards },
    exception_info: exceptionOf(task, rewards, finishedAt),
    started_at: final.started_at.toISOString(),
    finished_at: finishedAt.toISOString(),
    agent_execution: {
      started_at: final.started_at.toISOString(),
      finished_at: finishedAt.toISOString(),
    },
  };
  return { trialName, config, result };
}

/** Writes one trial's directory; what the job's stats need of it. */
async function writeTrial(dir: string, records: TrialRecords): Promise<HarborTrialResult> {
  const trajectory = atifTrajectoryOfAttempt({
    run: records.run,
    task: records.task,
    attempt: records.final,
    steps: records.steps,
    screenshots: records.screenshots,
    ...(records.grade !== undefined ? { grade: records.grade?.record ?? null } : {}),
  });
  parseAtifTrajectory(trajectory, `the trajectory of task ${records.task.task_id}`);
  const { trialName, config, result } = trialResultOf(records, trajectory.agent);
  // Checked against Harbor's models before they are written: a file this writes is one Harbor takes.
  harborTrialConfigSchema.parse(config);
  harborTrialResultSchema.parse(result);
  const trialDir = path.join(dir, trialName);
  await mkdir(path.join(trialDir, 'agent'), { recursive: true });
  await writeFile(path.join(trialDir, 'agent', 'trajectory.json'), json(trajectory));
  await writeFile(path.join(trialDir, 'config.json'), json(config));
  await writeFile(path.join(trialDir, 'result.json'), json(result));
  const reward = result.verifier_result?.rewards?.['reward'];
  if (reward !== undefined) {
    await mkdir(path.join(trialDir, 'verifier'), { recursive: true });
    await writeFile(path.join(trialDir, 'verifier', 'reward.txt'), `${reward}\n`);
  }
  return result;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Harbor's key of one evaluation: `<agent>__<model>__<dataset>`. */
function evalKey(trial: HarborTrialResult): string {
  return `${trial.agent_info.name}__${trial.agent_info.model_info?.name ?? 'None'}__${trial.source ?? 'adhoc'}`;
}

/** The job's stats, grouped by evaluation as Harbor's are: trials, errors, mean reward, who got which reward. */
function harborJobStats(trials: readonly HarborTrialResult[]): HarborJobResult['stats'] {
  const evals: Record<string, HarborEvalStats> = {};
  const sums = new Map<string, number>();
  for (const trial of trials) {
    const key = evalKey(trial);
    const stats = (evals[key] ??= {
      n_trials: 0,
      n_errors: 0,
      metrics: [],
      reward_stats: {},
      exception_stats: {},
    });
    stats.n_trials += 1;
    // Harbor's mean counts a trial without a reward as 0.
    const reward = trial.verifier_result?.rewards?.['reward'];
    sums.set(key, (sums.get(key) ?? 0) + (reward ?? 0));
    for (const [name, value] of Object.entries(trial.verifier_result?.rewards ?? {}))
      ((stats.reward_stats[name] ??= {})[String(value)] ??= []).push(trial.trial_name);
    if (trial.exception_info) {
      stats.n_errors += 1;
      (stats.exception_stats[trial.exception_info.exception_type] ??= []).push(trial.trial_name);
    }
  }
  for (const [key, stats] of Object.entries(evals))
    stats.metrics = [{ mean: (sums.get(key) ?? 0) / stats.n_trials }];
  return {
    n_trials: trials.length,
    n_errors: trials.filter((trial) => trial.exception_info).length,
    evals,
  };
}

/** Writes the trials of one page of tasks, from each task's final attempt, its steps and screenshots. */
async function writePage(
  context: ExportContext<unknown>,
  page: AttemptPage,
  grades: ReadonlyMap<string, GradeRecord> | undefined,
  problems: string[],
): Promise<HarborTrialResult[]> {
  const { run, dir } = context;
  const trials: HarborTrialResult[] = [];
  for (const task of page.tasks) {
    const [final] = page.attemptsOf(task);
    if (!final) {
      problems.push(`task ${task.task_id}: its final attempt is not recorded; no trial written`);
      continue;
    }
    const taskSteps = page.stepsOf(final);
    const screenshots = await copyAttemptScreenshots(taskSteps, {
      artifacts: context.artifacts,
      dir: path.join(dir, trialNameOf(run.id, task), 'agent'),
      name: (step) => `images/step-${String(step.step).padStart(3, '0')}`,
      where: (step) => `task ${task.task_id} attempt ${final.attempt} step ${step.step}`,
      problems,
    });
    const grade = grades
      ? (grades.get(attemptGradeKey(task.task_id, final.attempt)) ?? null)
      : undefined;
    trials.push(
      await writeTrial(dir, {
        run,
        task,
        final,
        steps: taskSteps,
        screenshots,
        grade,
      }),
    );
  }
  return trials;
}

export const harborExporter: RunExporter<unknown> = {
  description:
    "Harbor's job layout (harbor view reads it): one trial directory per task with an outcome, " +
    '<trial>/result.json (reward at verifier_result.rewards.reward), <trial>/agent/trajectory.json (ATIF), ' +
    `<trial>/verifier/reward.txt; the job's ${JOB_CONFIG_FILE}, ${JOB_RESULT_FILE} and ${INDEX_FILE}`,
  signatureFile: INDEX_FILE,
  async write(context) {
    const { db, run } = context;
    const tasks = await new TasksRepository(db).listByRun(run.id);
    const settled = tasks.filter(taskHasOutcome);
    const grades =
      context.grading && context.summary.graded
        ? await context.grading.attemptGrades(db, run.id)
        : undefined;
    const problems: string[] = [];
    const trials: HarborTrialResult[] = [];
    const finalAttempts = { pageSize: PAGE, keep: isFinalAttempt };
    for await (const page of attemptPages(db, run.id, settled, finalAttempts)) {
      trials.push(...(await writePage(context, page, grades, problems)));
      context.progress(trials.length, settled.length);
    }
    await writeJob(context, tasks, trials, problems);
    return { exported: trials.length, unfinished: tasks.length - settled.length, problems };
  },
};

async function writeJob(
  context: ExportContext<unknown>,
  tasks: readonly Task[],
  trials: readonly HarborTrialResult[],
  problems: readonly string[],
): Promise<void> {
  const { run, dir } = context;
  const agents = [
    ...new Map(trials.map((trial) => [evalKey(trial), trial.config.agent!])).values(),
  ];
  const jobConfig = harborJobConfigSchema.parse({
    job_name: run.name,
    jobs_dir: '.',
    n_attempts: run.epochs,
    agents,
    // Each task once: its epochs are its trials (n_attempts).
    tasks: [
      ...new Map(trials.map((trial) => [trial.config.task.path, trial.config.task])).values(),
    ],
  });
  const jobResult = harborJobResultSchema.parse({
    id: harborJobId(run.id),
    started_at: (run.started_at ?? run.created_at).toISOString(),
    finished_at: run.finished_at?.toISOString() ?? null,
    n_total_trials: trials.length,
    stats: harborJobStats(trials),
  });
  await writeFile(path.join(dir, JOB_CONFIG_FILE), json(jobConfig));
  await writeFile(path.join(dir, JOB_RESULT_FILE), json(jobResult));
  await writeFile(
    path.join(dir, INDEX_FILE),
    json({
      format: 'benchfleet-harbor-export',
      format_version: 1,
      run: { id: run.id, name: run.name, benchmark: run.benchmark, status: run.status },
      tasks_exported: trials.length,
      tasks_unfinished: tasks.filter((task) => !taskHasOutcome(task)).length,
      trials: Object.fromEntries(
        trials.map((trial) => {
          const task = tasks.find(
            (candidate) => trialNameOf(run.id, candidate) === trial.trial_name,
          )!;
          return [
            trial.trial_name,
            {
              task_id: task.task_id,
              base_task_id: task.base_task_id,
              epoch: task.epoch,
              attempts: task.attempts,
              status: task.status,
            },
          ];
        }),
      ),
      problems,
    }),
  );
}
