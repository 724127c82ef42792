import type { ArtifactStore } from '@benchfleet/artifacts';
import { runsRepository } from '@benchfleet/db';
import { createBenchmarkTaskHandler, type TaskProcessorDeps } from '@benchfleet/runs';
import {
  BytebotClient,
  BytebotDesktopClient,
  bytebotModelSchema,
  osworldBenchmark,
  runOsworldEpisode,
  type BytebotModel,
} from '@benchfleet/osworld';

export interface OsworldTaskHandlerDeps {
  taskDeps: TaskProcessorDeps;
  client: BytebotClient;
  artifacts: ArtifactStore;
  events: boolean;
  /** Probed while each task runs (with the agent): a desktop that dies mid-task fails the attempt as infra. */
  desktop?: BytebotDesktopClient;
}

/** The agent's probe during a task gets as long as the desktop's. */
const AGENT_PROBE_TIMEOUT_MS = 10_000;

/** The `osworld-task` job: one OSWorld task on this worker's Bytebot stack. */
export function createOsworldTaskHandler(deps: OsworldTaskHandlerDeps) {
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
  return createBenchmarkTaskHandler(osworldBenchmark, deps.taskDeps, async (context) => {
    const { run, config } = context;
    const runId = run.id;
    const taskId = context.task.task_id;
    const model = await modelOf(runId, run.model, context.signal);
    if (run.model === null) await runsRepository(deps.taskDeps.db).recordModelIfUnset(runId, model);
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
  });
}
