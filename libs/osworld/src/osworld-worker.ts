import { hostname } from 'node:os';
import { z } from 'zod';
import type { ArtifactStore } from '@benchfleet/artifacts';
import { errorMessage, flag } from '@benchfleet/core';
import type {
  BenchmarkOutcome,
  BenchmarkTaskContext,
  BenchmarkWorkerPart,
} from '@benchfleet/benchmark-kit';
import { runsRepository, type Database } from '@benchfleet/db';
import { bytebotModelSchema, type BytebotModel } from './bytebot-api.js';
import { BytebotClient } from './bytebot-client.js';
import { BytebotDesktopClient } from './bytebot-desktop.js';
import { osworldWorkerCapabilities } from './osworld-grade-enqueue.js';
import type { OsworldTask } from './osworld-dataset.js';
import { cancelLeftoverTasks, runOsworldEpisode } from './osworld-episode.js';
import type { OsworldRunConfig, OsworldTaskResult } from './osworld-run-config.js';

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** `worker-osworld`'s own flags (besides those every worker has). */
export const osworldWorkerFlags = z.object({
  bytebotUrl: flag(httpUrl, {
    flag: '--bytebot-url <url>',
    env: 'BYTEBOT_URL',
    description: 'bytebot-agent base URL, e.g. http://127.0.0.1:9991',
  }),
  desktopUrl: flag(httpUrl.optional(), {
    flag: '--desktop-url <url>',
    env: 'BYTEBOT_DESKTOP_URL',
    description:
      'bytebotd base URL, e.g. http://127.0.0.1:9990, probed before and during each task',
  }),
  events: flag(z.boolean().default(true), {
    flag: '--no-events',
    description: 'follow tasks by REST polling only (no Socket.IO)',
  }),
});

interface OsworldEpisodeDeps {
  db: Database;
  client: BytebotClient;
  artifacts: ArtifactStore;
  events: boolean;
  /** Probed while each task runs (with the agent): a desktop that dies mid-task fails the attempt as infra. */
  desktop?: BytebotDesktopClient;
}

/** The agent's probe during a task gets as long as the desktop's. */
const AGENT_PROBE_TIMEOUT_MS = 10_000;

/** The `osworld-task` job: one OSWorld task on this worker's Bytebot stack. */
function osworldEpisode(
  deps: OsworldEpisodeDeps,
): (
  context: BenchmarkTaskContext<OsworldRunConfig, OsworldTask>,
) => Promise<BenchmarkOutcome<OsworldTaskResult>> {
  // Without a model on the run, the stack's first model, asked once per run as the original does.
  const stackModels = new Map<string, Promise<BytebotModel>>();
  const modelOf = (runId: string, given: unknown, signal: AbortSignal): Promise<BytebotModel> => {
    const parsed = bytebotModelSchema.safeParse(given);
    if (parsed.success) return Promise.resolve(parsed.data);
    let asked = stackModels.get(runId);
    if (!asked) {
      asked = deps.client.resolveModel(undefined, { signal });
      asked.catch(() => stackModels.delete(runId));
      stackModels.set(runId, asked);
    }
    return asked;
  };

  const desktop = deps.desktop;
  return async (context) => {
    const { run, config } = context;
    const runId = run.id;
    const taskId = context.task.task_id;
    const model = await modelOf(runId, run.model, context.signal);
    if (run.model === null) await runsRepository(deps.db).recordModelIfUnset(runId, model);
    const outcome = await runOsworldEpisode({
      client: deps.client,
      task: { task_id: taskId, instruction: context.task.instruction },
      model,
      maxSteps: config.max_steps,
      stallTimeoutMs: config.stall_timeout_seconds * 1000,
      signal: context.signal,
      events: deps.events,
      logger: context.logger,
      watch: {
        agent: (signal) =>
          deps.client.healthProblem({
            signal: AbortSignal.any([signal, AbortSignal.timeout(AGENT_PROBE_TIMEOUT_MS)]),
          }),
        ...(desktop ? { desktop: (signal: AbortSignal) => desktop.healthProblem({ signal }) } : {}),
      },
      sink: {
        onTaskCreated: (bytebotTaskId) => context.setExternalId(bytebotTaskId),
        onStep: async (step) => {
          const screenshotUri = step.screenshot
            ? await deps.artifacts.put(
                [
                  runId,
                  taskId,
                  `attempt-${context.attempt}`,
                  `step_${String(step.step_number).padStart(3, '0')}.png`,
                ],
                step.screenshot,
              )
            : null;
          context.recordStep({
            step: step.step_number,
            at: step.timestamp,
            action: JSON.stringify({ tool_calls: step.tool_calls }),
            text: step.text_content,
            screenshot_uri: screenshotUri,
            external_id: step.message_id,
          });
          await context.job.job.updateProgress({ step: step.step_number });
        },
      },
    });
    return {
      status: outcome.status,
      // The stack refused the request (4xx): it would refuse it again.
      ...(outcome.stop_reason === 'create_failed' ? { errorClass: 'permanent' as const } : {}),
      finalApiStatus: outcome.final_api_status,
      totalSteps: outcome.total_steps,
      success: outcome.status === 'success',
      reward: outcome.status === 'success' ? 1 : 0,
      durationMs: outcome.duration_ms,
      answer: outcome.answer,
      error: outcome.error_message,
      externalId: outcome.bytebot_task_id || null,
      // Bytebot reports no tokens, so the cost of an OSWorld task is not known.
      costUsd: null,
      result: {
        bytebot_task_id: outcome.bytebot_task_id,
        start_time: outcome.start_time,
        end_time: outcome.end_time,
        duration_seconds: outcome.duration_seconds,
        stop_reason: outcome.stop_reason,
        model,
        api_url: deps.client.baseUrl,
      },
    };
  };
}

/**
 * The OSWorld worker: one Bytebot stack, one task at a time. Its worker id is the stack's; a
 * Bytebot task cannot move mid-way, so by default it lets an active task finish (3 h) at SIGTERM.
 */
export const osworldWorker: BenchmarkWorkerPart<
  OsworldRunConfig,
  OsworldTask,
  OsworldTaskResult,
  typeof osworldWorkerFlags
> = {
  command: 'worker-osworld',
  description:
    'runs OSWorld tasks on one Bytebot stack, one at a time, with the original benchmark semantics',
  flags: osworldWorkerFlags,
  // The worker id is the stack's: an OSWorld worker owns one stack.
  workerId: {
    default: (env) => env.BENCHFLEET_WORKER_ID || `stack-${hostname()}`,
    shown: 'stack-<hostname>',
    flag: {
      flag: '--stack-id <name>',
      env: 'BENCHFLEET_STACK_ID',
      description: 'name of this stack, used as the worker id (default stack-<hostname>)',
    },
  },
  graceS: 3 * 3600,
  concurrency: () => 1,
  artifacts: true,
  async setup({ flags, db, logger, artifacts }) {
    if (!artifacts) throw new Error('worker-osworld needs its artifact store');
    const client = new BytebotClient({ baseUrl: flags.bytebotUrl });
    const desktop = flags.desktopUrl ? new BytebotDesktopClient(flags.desktopUrl) : undefined;
    // What an earlier run of this worker left on its stack goes first (and before every task).
    await cancelLeftoverTasks(client, logger).catch((error: unknown) =>
      logger.warn(
        { reason: errorMessage(error) },
        'could not look for tasks left on the stack; will look again before the first task',
      ),
    );
    return {
      episode: osworldEpisode({
        db,
        client,
        artifacts,
        events: flags.events,
        ...(desktop ? { desktop } : {}),
      }),
      // Told in the heartbeat: `enqueue --grade` looks for a worker that can grade.
      capabilities: osworldWorkerCapabilities(flags),
      // A dead stack pauses this worker instead of failing the tasks it would take.
      healthCheck: async () => {
        const agentProblem = await client.healthProblem();
        if (agentProblem) return { ok: false, reason: agentProblem };
        const desktopProblem = await desktop?.healthProblem();
        return desktopProblem ? { ok: false, reason: desktopProblem } : { ok: true };
      },
    };
  },
};
