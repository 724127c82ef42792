import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { ArtifactStore } from '@benchfleet/artifacts';
import { sanitizeId } from '@benchfleet/core';
import {
  finalSignalOf,
  gradeTask,
  GradingInfraError,
  prepareTask,
  setUpTask,
  type GradeOptions,
  type GradingDesktop,
  type OsworldTaskSpec,
  type OsworldVmServer,
  type PreparedTask,
  type PythonRunner,
  type ScreenSize,
  type UrlFileSource,
} from '@benchfleet/osworld-grading';
import type { BytebotClient } from './bytebot-client.js';
import type { BytebotDesktopClient } from './bytebot-desktop.js';
import {
  runOsworldEpisode,
  type OsworldEpisodeOutcome,
  type RunOsworldEpisodeOptions,
} from './osworld-episode.js';
import {
  agentNotStartedGrade,
  osworldGradeOf,
  type OsworldEndStateArtifact,
  type OsworldGrade,
  type OsworldSetupRecord,
} from './osworld-grade.js';
import {
  runResetCommand,
  STACK_RESET_DEFAULTS,
  vmServerProbe,
  waitForStackReady,
} from './stack-reset.js';
import type { StackProbe } from './stack-watch.js';

/** Deadlines of the reset: the command, then bytebotd and the VM server answering. */
interface GradedTaskDeadlines {
  readonly resetCommandMs: number;
  readonly readyMs: number;
  readonly readyIntervalMs: number;
}

/** One worker's stack, as a graded task needs it. */
export interface GradedOsworldStack {
  readonly client: BytebotClient;
  /** bytebotd: probed after the reset (the same probe the worker's health check uses). */
  readonly desktop: BytebotDesktopClient;
  /** OSWorld's VM server on the desktop (`--desktop-server-url`). */
  readonly vm: OsworldVmServer;
  /** The worker's download cache, shared by its tasks. */
  readonly downloads: UrlFileSource;
  /** End-state files go here, under the attempt. */
  readonly artifacts: ArtifactStore;
  /** `--reset-command`; null: no reset, the task starts on whatever desktop the last one left. */
  readonly resetCommand: string | null;
  /** Per-attempt cache dirs are made (and removed) under `<cacheRoot>/attempts/`. */
  readonly cacheRoot: string;
  readonly screen: ScreenSize;
  /** `{CLIENT_PASSWORD}` of setup commands (Bytebot's user has NOPASSWD sudo: any value works). */
  readonly clientPassword: string;
  /** Where `check_python_file_by_test_suite` runs (default: the desktop's python3). */
  readonly python?: PythonRunner;
  readonly deadlines?: Partial<GradedTaskDeadlines>;
}

export type GradedTaskPhase = 'reset' | 'setup' | 'agent' | 'grade';

export interface RunGradedOsworldTaskOptions {
  readonly stack: GradedOsworldStack;
  readonly task: OsworldTaskSpec & { readonly instruction: string };
  /** The attempt, for the cache dir and the artifact keys. */
  readonly attempt: { readonly runId: string; readonly taskId: string; readonly attempt: number };
  /** How the agent runs, exactly as an ungraded task: model, stop rules, sink, watch, events… */
  readonly episode: Omit<RunOsworldEpisodeOptions, 'client' | 'task' | 'signal'>;
  readonly signal: AbortSignal;
  /** Told as each phase starts (for job progress). */
  readonly onPhase?: (phase: GradedTaskPhase) => void | Promise<void>;
  readonly logger?: Logger;
  readonly gradeOptions?: GradeOptions;
}

/**
 * Both words on one task: the agent's (as an ungraded run records it) and OSWorld's grade, with
 * what the reset and the setup did (`reset` null without a reset command; `setup` null when an
 * ungraded task's `config` cannot run). Record `grade` with this (an OsworldSetupRecord).
 */
export interface GradedOsworldTaskResult extends OsworldSetupRecord {
  readonly episode: OsworldEpisodeOutcome;
  readonly grade: OsworldGrade;
}

/** The part of a result kept with the attempt's own grade (`recordAttemptGrade`). */
export function setupRecordOf(result: GradedOsworldTaskResult): OsworldSetupRecord {
  return { reset: result.reset, setup: result.setup, timings: result.timings };
}

/**
 * Evaluation failed on the desktop's side after the agent had ended (the VM server died, a getter
 * transfer or a download failed): not scored, the attempt is retried on a fresh desktop. The
 * agent's word of this attempt is kept here for the attempt's record.
 */
export class EvaluationInfraError extends GradingInfraError {
  override readonly name = 'EvaluationInfraError';
  constructor(
    readonly episode: OsworldEpisodeOutcome,
    override readonly cause: unknown,
  ) {
    super(
      `grading failed after the agent ended (${episode.final_api_status}, ${episode.total_steps} step(s)); not scored: ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

/**
 * One graded OSWorld task on one stack: reset (fresh desktop, then bytebotd and the VM server
 * answer), set up the task's `config`, let the agent act through Bytebot exactly as an ungraded
 * run does, then grade the end state as OSWorld's evaluate() does and keep the files it read.
 *
 * - Infra faults throw TransientErrors (StackResetError, StackNotReadyError, the grading library's
 *   GradingInfraErrors, EvaluationInfraError, the episode's own): retried, never scored.
 * - The agent's outcome is never turned into infra, and every agent outcome is graded as OSWorld
 *   grades a trajectory: the end state is scored whether the agent said COMPLETED, gave up,
 *   failed, was stopped at the step limit or stalled (OSWorld scores the end state at its step
 *   limit; a stall is our own step limit). Only a task Bytebot refused to create (create_failed)
 *   is not evaluated: the agent never acted (`agent_not_started`).
 * - An `ungraded` task still runs (set up when its `config` can run); its grade says why not.
 */
export async function runGradedOsworldTask(
  options: RunGradedOsworldTaskOptions,
): Promise<GradedOsworldTaskResult> {
  const { stack, task, signal } = options;
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ graded: task.task_id });
  const deadlines = { ...DEFAULT_DEADLINES, ...stack.deadlines };
  const prepared = prepareTask(task);
  const needsVmServer = !(prepared.fidelity.level === 'ungraded' && !prepared.fidelity.canSetUp);

  await options.onPhase?.('reset');
  const resetStarted = Date.now();
  const command = stack.resetCommand
    ? await runResetCommand(stack.resetCommand, { deadlineMs: deadlines.resetCommandMs, signal })
    : null;
  const resetMs = Date.now() - resetStarted;
  const probes: Record<string, StackProbe> = {
    bytebotd: (probeSignal) => stack.desktop.healthProblem({ signal: probeSignal }),
    ...(needsVmServer ? { 'VM server': vmServerProbe(stack.vm) } : {}),
  };
  const readyMs = await waitForStackReady({
    probes,
    deadlineMs: deadlines.readyMs,
    intervalMs: deadlines.readyIntervalMs,
    signal,
  });
  const reset = command ? { ...command, readyMs } : null;
  logger.info({ resetMs, readyMs, reset: command !== null }, 'stack ready');

  const cacheDir = join(
    stack.cacheRoot,
    'attempts',
    sanitizeId(options.attempt.runId),
    sanitizeId(options.attempt.taskId),
    `attempt-${options.attempt.attempt}`,
  );
  const desktop: GradingDesktop = {
    vm: stack.vm,
    downloads: stack.downloads,
    cacheDir,
    screen: stack.screen,
    clientPassword: stack.clientPassword,
    signal,
    logger,
    ...(stack.python ? { python: stack.python } : {}),
  };
  try {
    await options.onPhase?.('setup');
    const setupStarted = Date.now();
    // A retried attempt's number is new, but a redelivered job may find its own leftovers.
    await rm(cacheDir, { recursive: true, force: true });
    await mkdir(cacheDir, { recursive: true });
    const setup = needsVmServer ? await setUpTask(prepared, desktop) : null;
    const setupMs = Date.now() - setupStarted;

    await options.onPhase?.('agent');
    const agentStarted = Date.now();
    const episode = await runOsworldEpisode({
      ...options.episode,
      client: stack.client,
      task: { task_id: task.task_id, instruction: task.instruction },
      signal,
    });
    const agentMs = Date.now() - agentStarted;

    const gradeStarted = Date.now();
    const grade = await gradeEpisode(prepared, episode, desktop, options);
    const gradeMs = Date.now() - gradeStarted;
    logger.info(
      { score: grade.score, cause: grade.noScoreCause, setupMs, agentMs, gradeMs },
      'graded',
    );
    return {
      episode,
      grade,
      reset,
      setup,
      timings: { resetMs, readyMs, setupMs, agentMs, gradeMs },
    };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

const DEFAULT_DEADLINES: GradedTaskDeadlines = {
  resetCommandMs: STACK_RESET_DEFAULTS.commandDeadlineMs,
  readyMs: STACK_RESET_DEFAULTS.readyDeadlineMs,
  readyIntervalMs: STACK_RESET_DEFAULTS.readyIntervalMs,
};

async function gradeEpisode(
  prepared: PreparedTask,
  episode: OsworldEpisodeOutcome,
  desktop: GradingDesktop,
  options: RunGradedOsworldTaskOptions,
): Promise<OsworldGrade> {
  if (episode.stop_reason === 'create_failed')
    return agentNotStartedGrade(
      prepared.fidelity,
      finalSignalOf(episode.final_api_status),
      `Bytebot refused to create the task (${episode.error_message ?? 'no reason given'}): the agent never acted, so there is no end state of its to grade`,
    );
  await options.onPhase?.('grade');
  const outcome = await gradeTask(
    prepared,
    desktop,
    finalSignalOf(episode.final_api_status),
    options.gradeOptions,
  );
  if (outcome.kind === 'no_score' && outcome.cause === 'infra')
    throw new EvaluationInfraError(episode, outcome.error);
  const { runId, taskId, attempt } = options.attempt;
  const endState: OsworldEndStateArtifact[] = [];
  for (const file of outcome.endStateFiles) {
    const uri = await options.stack.artifacts.put(
      [runId, taskId, `attempt-${attempt}`, 'end-state', ...file.name.split('/')],
      await readFile(join(desktop.cacheDir, file.name)),
    );
    endState.push({ ...file, uri });
  }
  return osworldGradeOf(outcome, endState);
}
