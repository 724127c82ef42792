import { pino, type Logger } from 'pino';
import {
  isBytebotEndStatus,
  type BytebotContentBlock,
  type BytebotMessage,
  type BytebotModel,
  type BytebotTaskStatus,
} from './bytebot-api.js';
import {
  BytebotHttpError,
  BytebotResponseError,
  BytebotUnavailableError,
  type BytebotClient,
  type BytebotMessageSlice,
  type BytebotTaskSubscription,
} from './bytebot-client.js';
import {
  finalStatusDescriptionOf,
  lastImageOf,
  textContentOf,
  toolCallsOf,
  type BytebotToolCall,
} from './bytebot-message-content.js';
import { roundLikePython } from '@benchfleet/core';
import { DesktopLostError, StackWatch, type StackWatchOptions } from './stack-watch.js';
import { formatPythonUtcTimestamp } from './python-compatible-format.js';

/** How often a task is read over REST when events are off or quiet: the original's `--poll-interval` default. */
export const OSWORLD_POLL_INTERVAL_MS = 3_000;

export interface OsworldEpisodeStep {
  /** 1-based, in the order of the ASSISTANT messages. */
  step_number: number;
  /** `createdAt` of the ASSISTANT message. */
  timestamp: string;
  message_id: string;
  tool_calls: BytebotToolCall[];
  text_content: string;
  /** The message's content blocks as Bytebot stored them (tool_use ids match the LLM's replies). */
  content: readonly BytebotContentBlock[];
  /** PNG bytes of the last image in the USER message that follows the step, if any. */
  screenshot: Buffer | null;
}

/** Where an episode reports as it goes; each call is awaited before the episode goes on. */
export interface OsworldEpisodeSink {
  /**
   * Once, just before the Bytebot task is asked for with `description`; `created` settles with its
   * id (or rejects when it is not made). The agent may call its LLM before the id is known.
   */
  onCreatingTask?(description: string, created: Promise<string>): void;
  /** Once, as soon as the Bytebot task exists: record the id so that a retry can cancel it. */
  onTaskCreated(bytebotTaskId: string): void | Promise<void>;
  /** Each step once, in order, when its tool results (and so its screenshot) are known. */
  onStep(step: OsworldEpisodeStep): void | Promise<void>;
}

type OsworldEpisodeStatus = 'success' | 'failed' | 'cancelled' | 'error';

/** Why the episode stopped; the original only tells them apart through `final_api_status`. */
type OsworldEpisodeStopReason = 'end_status' | 'step_limit' | 'stalled' | 'create_failed';

export interface OsworldEpisodeOutcome {
  status: OsworldEpisodeStatus;
  /** The Bytebot status the episode ended on, or `CREATE_FAILED`. */
  final_api_status: BytebotTaskStatus | 'CREATE_FAILED';
  total_steps: number;
  /** Empty when the task could not be created. */
  bytebot_task_id: string;
  /** The description of the agent's last `set_task_status` call. */
  answer: string | null;
  error_message: string | null;
  /** Python `isoformat()` UTC timestamps, as in the original result.json. */
  start_time: string;
  end_time: string;
  /** Rounded to 0.1 s; 0 when the create failed, as in the original. */
  duration_seconds: number;
  /** The same, to the millisecond. */
  duration_ms: number;
  stop_reason: OsworldEpisodeStopReason;
}

interface OsworldEpisodeClock {
  now(): number;
}

export interface RunOsworldEpisodeOptions {
  client: BytebotClient;
  task: { task_id: string; instruction: string };
  /** Without one, the first model the stack offers (as the original). */
  model?: BytebotModel;
  maxSteps?: number;
  /** No new step for this long: cancel (the original: 5 minutes). */
  stallTimeoutMs?: number;
  signal: AbortSignal;
  sink: OsworldEpisodeSink;
  clock?: OsworldEpisodeClock;
  /** Follow the task over Socket.IO; REST polling covers any time without a live socket. */
  events?: boolean;
  /** REST polling period while no socket is live (the original polls every 3 s). */
  pollIntervalMs?: number;
  /** REST status check period while the socket is live. */
  heartbeatIntervalMs?: number;
  idlePollIntervalMs?: number;
  /** How long the stack may take to become idle once its leftover tasks are cancelled. */
  idleTimeoutMs?: number;
  /** At the step limit, how long to wait for the last step's screenshot before cancelling. */
  lastStepGraceMs?: number;
  /**
   * Probes of the stack's desktop and agent while the task runs (`StackWatch`). A desktop that
   * dies mid-task ends the attempt with `DesktopLostError`, an agent with `BytebotUnavailableError`
   * (infrastructure faults, retried), never with an outcome of the agent.
   */
  watch?: StackWatchOptions;
  logger?: Logger;
}

/** Computer tools whose result carries no screenshot even when the desktop works. */
const TOOLS_WITHOUT_SCREENSHOT = new Set([
  'computer_cursor_position',
  'computer_read_file',
  'computer_write_file',
]);
/** Computer actions in a row without a screenshot that make one failed probe enough to call the desktop gone. */
const BLIND_STEPS_WITH_PROBE = 2;
/** Without a desktop to probe, the agent's results alone: this many actions in a row without a screenshot. */
const BLIND_STEPS_WITHOUT_PROBE = 3;

/** The episode was stopped through its AbortSignal; the Bytebot task was cancelled if possible. */
export class OsworldEpisodeAbortedError extends Error {
  override readonly name = 'OsworldEpisodeAbortedError';
  constructor(
    readonly bytebotTaskId: string | null,
    readonly stepsRecorded: number,
    options?: ErrorOptions,
  ) {
    super(
      bytebotTaskId === null
        ? 'OSWorld episode aborted before its Bytebot task was created'
        : `OSWorld episode aborted after ${stepsRecorded} step(s); Bytebot task ${bytebotTaskId} cancelled`,
      options,
    );
  }
}

const systemClock: OsworldEpisodeClock = { now: () => Date.now() };

/**
 * Runs one OSWorld task on one Bytebot stack with the semantics of the original Bytebot OSWorld
 * benchmark (`run_benchmark.py`): wait for an idle stack, create the task from the instruction,
 * count ASSISTANT messages as steps, stop on an end status, at the step limit or after a stall
 * (cancelling the task), and score by the agent's own final status.
 *
 * Throws `BytebotUnavailableError` when the stack stops answering (retry the job, after
 * `cancelLeftoverTask`), `DesktopLostError` when its desktop dies mid-task (the task cancelled),
 * `OsworldEpisodeAbortedError` when `signal` aborts, and whatever the sink throws (after
 * cancelling the task).
 */
export async function runOsworldEpisode(
  options: RunOsworldEpisodeOptions,
): Promise<OsworldEpisodeOutcome> {
  const { client, task, signal } = options;
  const clock = options.clock ?? systemClock;
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ osworldTask: task.task_id });
  const requestOptions = { signal };
  try {
    signal.throwIfAborted();
    const model = await resolveModelOrUnavailable(client, options.model, signal);
    // The stack is this worker's alone and it runs one task at a time: whatever runs on it now was
    // left by an attempt that is gone (a killed worker, a lost job). The original waits for it.
    await cancelLeftoverTasks(client, logger, signal);
    const idle = await client.waitUntilIdle({
      ...requestOptions,
      pollIntervalMs: options.idlePollIntervalMs ?? 3_000,
      timeoutMs: options.idleTimeoutMs ?? 60_000,
    });
    if (!idle)
      throw new BytebotUnavailableError(
        'GET',
        '/tasks',
        1,
        'the stack is still busy after its leftover tasks were cancelled',
        true,
      );

    const startMs = clock.now();
    let bytebotTaskId: string;
    try {
      const created = client
        .createTask({ description: task.instruction, model }, requestOptions)
        .then((row) => row.id);
      options.sink.onCreatingTask?.(task.instruction, created);
      bytebotTaskId = await created;
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      // A stack that fails (5xx) or answers garbage could not start the task: its fault, retried.
      if (error instanceof BytebotResponseError || error.status >= 500) {
        throw new BytebotUnavailableError(
          'POST',
          '/tasks',
          1,
          `the stack could not create the task (${error.message})`,
          true,
        );
      }
      // A refused request (4xx) is refused again on every try: recorded once, as the original's CREATE_FAILED.
      logger.error({ reason: error.message }, 'the stack refused to create the Bytebot task');
      const endMs = clock.now();
      return {
        status: 'error',
        final_api_status: 'CREATE_FAILED',
        total_steps: 0,
        bytebot_task_id: '',
        answer: null,
        error_message: error.message,
        start_time: formatPythonUtcTimestamp(startMs),
        end_time: formatPythonUtcTimestamp(endMs),
        duration_seconds: 0,
        duration_ms: 0,
        stop_reason: 'create_failed',
      };
    }
    logger.info({ bytebotTaskId }, 'created the Bytebot task');
    const follower = new EpisodeFollower(
      options,
      clock,
      logger.child({ bytebotTaskId }),
      bytebotTaskId,
      startMs,
    );
    return await follower.run();
  } catch (error) {
    if (signal.aborted && !(error instanceof OsworldEpisodeAbortedError)) {
      throw new OsworldEpisodeAbortedError(null, 0, { cause: signal.reason });
    }
    throw error;
  }
}

/** The model list fails when the stack's LLM proxy is down (502): a fault of the stack, so the job is retried. */
async function resolveModelOrUnavailable(
  client: BytebotClient,
  model: BytebotModel | undefined,
  signal: AbortSignal,
): Promise<BytebotModel> {
  try {
    return await client.resolveModel(model, { signal });
  } catch (error) {
    if (error instanceof BytebotHttpError && error.status >= 500) {
      throw new BytebotUnavailableError(
        error.method,
        error.path,
        1,
        `HTTP ${error.status}: ${error.serverMessage}`,
        true,
      );
    }
    throw error;
  }
}

export type LeftoverTaskOutcome = 'cancelled' | 'already_ended' | 'not_found';

/**
 * Cancels every task RUNNING or PENDING on a stack: its worker calls this at start and before each
 * task, since a task it did not just create there was left by an attempt that is gone.
 */
export async function cancelLeftoverTasks(
  client: BytebotClient,
  logger: Logger,
  signal?: AbortSignal,
): Promise<string[]> {
  const options = signal ? { signal } : {};
  const leftovers = await client.listTasks(
    { statuses: ['RUNNING', 'PENDING'], limit: 50 },
    options,
  );
  for (const leftover of leftovers.tasks) {
    const outcome = await cancelLeftoverTask(client, leftover.id, options);
    logger.warn(
      { bytebotTask: leftover.id, status: leftover.status, outcome },
      'cancelled a task left on this stack by an attempt that is gone',
    );
  }
  return leftovers.tasks.map((task) => task.id);
}

/** For a retry: cancels the Bytebot task an earlier attempt created, whatever state it is in. */
export async function cancelLeftoverTask(
  client: BytebotClient,
  bytebotTaskId: string,
  options: { signal?: AbortSignal } = {},
): Promise<LeftoverTaskOutcome> {
  try {
    return (await client.cancelTask(bytebotTaskId, options)).outcome;
  } catch (error) {
    if (error instanceof BytebotHttpError && error.status === 404) return 'not_found';
    throw error;
  }
}

/** Follows one created task until it stops, reporting its steps to the sink. */
class EpisodeFollower {
  private readonly client: BytebotClient;
  private readonly sink: OsworldEpisodeSink;
  private readonly signal: AbortSignal;
  private readonly maxSteps: number;
  private readonly stallTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly lastStepGraceMs: number;
  private readonly eventsEnabled: boolean;
  private readonly wakeup = new Wakeup();

  private status: BytebotTaskStatus = 'PENDING';
  private readonly messages = new Map<string, { message: BytebotMessage; seen: number }>();
  private assistantCount = 0;
  /** How many messages, from the first, are known without a gap (from REST, or from events while trusted). */
  private gapFreeCount = 0;
  private subscription: BytebotTaskSubscription | null = null;
  /** Bumped on every socket (re)connect; events are trusted only after a REST read in the same connection. */
  private connection = 0;
  private eventsTrusted = false;
  private syncNeeded = false;
  private nextRestAt: number;
  private lastProgressAt: number;
  private stepLimitReachedAt: number | null = null;
  private readonly recorded: BytebotMessage[] = [];
  private readonly recordedIds = new Set<string>();
  private readonly watch: StackWatch;
  /** Computer actions in a row whose result came back without a screenshot. */
  private blindSteps = 0;
  private lastToolError: string | null = null;

  constructor(
    options: RunOsworldEpisodeOptions,
    private readonly clock: OsworldEpisodeClock,
    private readonly logger: Logger,
    private readonly bytebotTaskId: string,
    private readonly startMs: number,
  ) {
    this.client = options.client;
    this.sink = options.sink;
    this.signal = options.signal;
    this.maxSteps = options.maxSteps ?? 100;
    this.stallTimeoutMs = options.stallTimeoutMs ?? 300_000;
    this.pollIntervalMs = options.pollIntervalMs ?? OSWORLD_POLL_INTERVAL_MS;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 15_000;
    this.lastStepGraceMs = options.lastStepGraceMs ?? 5_000;
    this.lastProgressAt = clock.now();
    this.nextRestAt = clock.now();
    this.eventsEnabled = options.events ?? true;
    this.watch = new StackWatch(options.watch ?? {}, (loss) => {
      this.logger.warn(
        { part: loss.part, reason: loss.reason, evidence: loss.evidence },
        'stack lost mid-task',
      );
      this.wakeup.notify();
    });
  }

  async run(): Promise<OsworldEpisodeOutcome> {
    try {
      this.watch.start();
      if (this.eventsEnabled) this.subscribe();
      await this.sink.onTaskCreated(this.bytebotTaskId);
      await this.readRestTolerantly('full');
      for (;;) {
        this.signal.throwIfAborted();
        this.throwIfStackLost();
        if (this.restDue()) await this.readRestTolerantly(this.eventsTrusted ? 'status' : 'full');
        await this.recordSettledSteps(false);
        this.throwIfStackLost();

        if (isBytebotEndStatus(this.status)) return await this.finishOnEndStatus();
        if (this.stepLimitReachedAt !== null) {
          const lastStepRecorded = this.recorded.length >= this.maxSteps;
          if (
            lastStepRecorded ||
            this.clock.now() >= this.stepLimitReachedAt + this.lastStepGraceMs
          ) {
            this.logger.info({ maxSteps: this.maxSteps }, 'step limit reached; cancelling');
            return await this.stopByCancelling('step_limit');
          }
        }
        if (this.clock.now() - this.lastProgressAt >= this.stallTimeoutMs) {
          // Events can be lost unnoticed; REST decides whether the agent really made no progress.
          // A stack that cannot answer that read, or never started the task, is at fault, not the agent.
          const before = this.assistantCount;
          await this.readRestOrUnavailable();
          if (this.assistantCount === before && !isBytebotEndStatus(this.status)) {
            if (this.status === 'PENDING' && this.recorded.length === 0) {
              await this.cancelQuietly();
              throw new BytebotUnavailableError(
                'GET',
                `/tasks/${this.bytebotTaskId}`,
                1,
                `the stack never started the task within ${this.stallTimeoutMs / 1000} s`,
                true,
              );
            }
            this.logger.info({ stallTimeoutMs: this.stallTimeoutMs }, 'no new step; cancelling');
            return await this.stopByCancelling('stalled');
          }
          continue;
        }
        await this.wakeup.wait(this.nextWakeAt() - this.clock.now(), this.signal);
      }
    } catch (error) {
      if (!(error instanceof BytebotUnavailableError)) await this.cancelQuietly();
      if (this.signal.aborted) {
        throw new OsworldEpisodeAbortedError(this.bytebotTaskId, this.recorded.length, {
          cause: this.signal.reason,
        });
      }
      throw error;
    } finally {
      this.watch.stop();
      this.subscription?.close();
    }
  }

  /** A part of the stack died while the task ran: the attempt ends as the stack's fault. */
  private throwIfStackLost(): void {
    const loss = this.watch.lost;
    if (!loss) return;
    const detail = `${loss.reason}; ${loss.evidence}`;
    if (loss.part === 'agent')
      throw new BytebotUnavailableError(
        'GET',
        '/tasks',
        loss.failures,
        `it died mid-task: ${detail}`,
      );
    throw new DesktopLostError(
      `the desktop died mid-task, after step ${this.recorded.length}: ${detail}`,
    );
  }

  /**
   * The agent's results as evidence: a computer action that should come back with a screenshot
   * and does not means the desktop failed it. Two in a row and a failed probe, or three in a row
   * with no desktop to probe, and the desktop is gone.
   */
  private async weighScreenshotEvidence(
    message: BytebotMessage,
    next: BytebotMessage,
    screenshot: string | null,
  ): Promise<void> {
    const expectsScreenshot = toolCallsOf(message).some(
      (call) => call.name.startsWith('computer_') && !TOOLS_WITHOUT_SCREENSHOT.has(call.name),
    );
    if (!expectsScreenshot) return;
    if (screenshot !== null) {
      this.blindSteps = 0;
      return;
    }
    this.blindSteps++;
    this.lastToolError = toolErrorOf(next) ?? this.lastToolError;
    const evidence = `the agent's last ${this.blindSteps} computer actions came back without a screenshot${this.lastToolError ? ` (${this.lastToolError})` : ''}`;
    if (this.watch.watchesDesktop) {
      if (this.blindSteps < BLIND_STEPS_WITH_PROBE) return;
      const problem = await this.watch.probeDesktopNow();
      if (problem !== null)
        this.watch.declare({ part: 'desktop', reason: problem, evidence, failures: 1 });
    } else if (this.blindSteps >= BLIND_STEPS_WITHOUT_PROBE) {
      this.watch.declare({
        part: 'desktop',
        reason: 'the desktop fails the agent (no --desktop-url to probe)',
        evidence,
        failures: 0,
      });
    }
  }

  private subscribe(): void {
    this.subscription = this.client.subscribeToTask(this.bytebotTaskId, {
      onConnected: () => {
        this.connection++;
        this.syncNeeded = true;
        this.wakeup.notify();
      },
      onDisconnected: (reason) => {
        this.logger.debug({ reason }, 'socket disconnected; polling');
        this.gapFreeCount = this.knownPrefixCount();
        this.eventsTrusted = false;
        this.nextRestAt = this.clock.now();
        this.wakeup.notify();
      },
      onTaskUpdated: (task) => {
        this.applyStatus(task.status);
        this.wakeup.notify();
      },
      onNewMessage: (message) => {
        this.addMessage(message);
        this.wakeup.notify();
      },
    });
  }

  private restDue(): boolean {
    return this.syncNeeded || this.clock.now() >= this.nextRestAt;
  }

  private nextWakeAt(): number {
    let at = Math.min(this.nextRestAt, this.lastProgressAt + this.stallTimeoutMs);
    if (this.stepLimitReachedAt !== null)
      at = Math.min(at, this.stepLimitReachedAt + this.lastStepGraceMs);
    return at;
  }

  /**
   * `status`: only the task (a heartbeat while events flow). `full`: the task, then the messages
   * after the confirmed prefix, in that order so that an end status comes with all its messages.
   */
  private async readRest(kind: 'status' | 'full'): Promise<void> {
    const connection = this.connection;
    const wasSyncNeeded = this.syncNeeded;
    const connected = this.subscription?.connected ?? false;
    const task = await this.client.getTask(this.bytebotTaskId, { signal: this.signal });
    this.applyStatus(task.status);
    if (kind === 'full' || wasSyncNeeded) {
      this.addSlice(
        await this.client.getMessagesFrom(this.bytebotTaskId, this.knownPrefixCount(), {
          signal: this.signal,
        }),
      );
    }
    if (wasSyncNeeded && connection === this.connection) {
      this.syncNeeded = false;
      this.eventsTrusted = connected && (this.subscription?.connected ?? false);
    }
    this.nextRestAt =
      this.clock.now() + (this.eventsTrusted ? this.heartbeatIntervalMs : this.pollIntervalMs);
  }

  /** A read the stall decision rests on: an error answer makes it the stack's fault (retried), not a stall. */
  private async readRestOrUnavailable(): Promise<void> {
    try {
      await this.readRest('full');
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      throw new BytebotUnavailableError(
        'GET',
        `/tasks/${this.bytebotTaskId}`,
        1,
        `the stack answers errors instead of the task's state (${error.message})`,
        true,
      );
    }
  }

  /** An error answer is logged and the read tried again later, as the original's loop does. */
  private async readRestTolerantly(kind: 'status' | 'full'): Promise<void> {
    try {
      await this.readRest(kind);
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      this.logger.warn({ reason: error.message }, 'reading the task failed; trying again later');
      this.nextRestAt = this.clock.now() + this.pollIntervalMs;
    }
  }

  /** While events are trusted the store has no gap, so a read can start after everything it holds. */
  private knownPrefixCount(): number {
    return this.eventsTrusted ? Math.max(this.messages.size, this.gapFreeCount) : this.gapFreeCount;
  }

  private addSlice(slice: BytebotMessageSlice): void {
    for (const message of slice.messages) this.addMessage(message);
    this.gapFreeCount = Math.max(this.gapFreeCount, slice.startIndex + slice.messages.length);
  }

  private addMessage(message: BytebotMessage): void {
    if (this.messages.has(message.id)) return;
    this.messages.set(message.id, { message, seen: this.messages.size });
    if (message.role !== 'ASSISTANT') return;
    this.assistantCount++;
    this.lastProgressAt = this.clock.now();
    if (this.assistantCount >= this.maxSteps && this.stepLimitReachedAt === null) {
      this.stepLimitReachedAt = this.clock.now();
    }
  }

  /** Once a task has reached an end status, a late non-end report (a slow read) does not undo it. */
  private applyStatus(status: BytebotTaskStatus): void {
    if (isBytebotEndStatus(this.status) && !isBytebotEndStatus(status)) return;
    this.status = status;
  }

  private orderedMessages(): BytebotMessage[] {
    return [...this.messages.values()]
      .sort((a, b) => compareText(a.message.createdAt, b.message.createdAt) || a.seen - b.seen)
      .map((entry) => entry.message);
  }

  /**
   * Hands the sink every step whose following message is known and gap-free (or, with `final`,
   * every step left), in order and up to the step limit.
   */
  private async recordSettledSteps(final: boolean): Promise<void> {
    const ordered = this.orderedMessages();
    const trusted =
      final || this.eventsTrusted ? ordered.length : Math.min(this.gapFreeCount, ordered.length);
    for (const [index, message] of ordered.entries()) {
      if (this.recorded.length >= this.maxSteps) return;
      if (message.role !== 'ASSISTANT' || this.recordedIds.has(message.id)) continue;
      const next = ordered[index + 1];
      if (!final && (next === undefined || index + 1 >= trusted)) return;
      const screenshot = next?.role === 'USER' ? lastImageOf(next.content) : null;
      const step: OsworldEpisodeStep = {
        step_number: this.recorded.length + 1,
        timestamp: message.createdAt,
        message_id: message.id,
        tool_calls: toolCallsOf(message),
        text_content: textContentOf(message),
        content: message.content,
        screenshot: screenshot === null ? null : Buffer.from(screenshot, 'base64'),
      };
      this.recorded.push(message);
      this.recordedIds.add(message.id);
      await this.sink.onStep(step);
      if (!final && next !== undefined) {
        await this.weighScreenshotEvidence(message, next, screenshot);
        this.throwIfStackLost();
      }
    }
  }

  private async finishOnEndStatus(): Promise<OsworldEpisodeOutcome> {
    try {
      const [task, slice] = await Promise.all([
        this.client.getTask(this.bytebotTaskId, { signal: this.signal }),
        this.client.getMessagesFrom(this.bytebotTaskId, this.knownPrefixCount(), {
          signal: this.signal,
        }),
      ]);
      if (isBytebotEndStatus(task.status)) this.status = task.status;
      this.addSlice(slice);
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      this.logger.warn(
        { reason: error.message },
        'the final read failed; keeping what the events delivered',
      );
    }
    await this.recordSettledSteps(true);
    return this.outcome('end_status');
  }

  private async stopByCancelling(reason: 'step_limit' | 'stalled'): Promise<OsworldEpisodeOutcome> {
    let stopReason: OsworldEpisodeStopReason = reason;
    try {
      const cancel = await this.client.cancelTask(this.bytebotTaskId, { signal: this.signal });
      if (cancel.outcome === 'cancelled') {
        this.status = 'CANCELLED';
      } else {
        const task = await this.client.getTask(this.bytebotTaskId, { signal: this.signal });
        this.status = isBytebotEndStatus(task.status) ? task.status : 'CANCELLED';
        stopReason = 'end_status';
      }
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      this.logger.warn(
        { reason: error.message },
        'cancelling failed; counting the task as cancelled, as the original does',
      );
      this.status = 'CANCELLED';
    }
    await this.readMessagesTolerantly();
    await this.recordSettledSteps(true);
    return this.outcome(stopReason);
  }

  private async readMessagesTolerantly(): Promise<void> {
    try {
      this.addSlice(
        await this.client.getMessagesFrom(this.bytebotTaskId, this.knownPrefixCount(), {
          signal: this.signal,
        }),
      );
    } catch (error) {
      if (!(error instanceof BytebotHttpError || error instanceof BytebotResponseError))
        throw error;
      this.logger.warn(
        { reason: error.message },
        'the final read failed; keeping what was read before',
      );
    }
  }

  private async cancelQuietly(): Promise<void> {
    try {
      await this.client.cancelTask(this.bytebotTaskId, {
        retries: false,
        signal: AbortSignal.timeout(5_000),
      });
    } catch (error) {
      this.logger.warn({ reason: (error as Error).message }, 'could not cancel the Bytebot task');
    }
  }

  private outcome(stopReason: OsworldEpisodeStopReason): OsworldEpisodeOutcome {
    const endMs = this.clock.now();
    const finalStatus = this.status;
    return {
      status:
        finalStatus === 'COMPLETED'
          ? 'success'
          : finalStatus === 'CANCELLED'
            ? 'cancelled'
            : 'failed',
      final_api_status: finalStatus,
      total_steps: this.recorded.length,
      bytebot_task_id: this.bytebotTaskId,
      answer: finalStatusDescriptionOf(this.recorded),
      error_message: null,
      start_time: formatPythonUtcTimestamp(this.startMs),
      end_time: formatPythonUtcTimestamp(endMs),
      duration_seconds: roundLikePython((endMs - this.startMs) / 1000, 1),
      duration_ms: endMs - this.startMs,
      stop_reason: stopReason,
    };
  }
}

/** Lets the follower sleep until a deadline or until an event arrives, whichever is first. */
class Wakeup {
  private pending = false;
  private wake: (() => void) | null = null;

  notify(): void {
    this.pending = true;
    this.wake?.();
  }

  async wait(ms: number, signal: AbortSignal): Promise<void> {
    if (!this.pending && ms > 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        this.wake = done;
      });
    }
    this.pending = false;
  }
}

/** The text of the first failed tool result in a message, shortened. */
function toolErrorOf(message: BytebotMessage): string | null {
  for (const block of message.content) {
    if (block.type !== 'tool_result' || block['is_error'] !== true) continue;
    const content = Array.isArray(block['content']) ? (block['content'] as unknown[]) : [];
    for (const inner of content) {
      const text = (inner as { type?: unknown; text?: unknown } | null)?.text;
      if (typeof text === 'string') return text.slice(0, 200);
    }
    return 'a tool error';
  }
  return null;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
