import { z } from 'zod';
import type { ArtifactStore } from '@benchfleet/artifacts';
import type { Database } from '@benchfleet/db';
import { runsRepository } from '@benchfleet/db';
import { createTaskJobHandler, PermanentTaskError, type JobHandler, type TaskProcessorDeps } from '@benchfleet/queue';
import { BytebotClient, cancelLeftoverTask, runOsworldEpisode, type BytebotModel } from '@benchfleet/osworld';

const runConfigSchema = z.object({
  max_steps: z.number().int().positive().default(100),
  stall_timeout_seconds: z.number().positive().default(300),
});

const modelSchema = z.object({ provider: z.string(), name: z.string(), title: z.string() }).passthrough();

interface RunSettings {
  maxSteps: number;
  stallTimeoutMs: number;
  model: BytebotModel | undefined;
}

export interface OsworldTaskHandlerDeps {
  db: Database;
  taskDeps: TaskProcessorDeps;
  client: BytebotClient;
  artifacts: ArtifactStore;
  events: boolean;
}

/** The `osworld-task` job: one OSWorld task on this worker's Bytebot stack. */
export function createOsworldTaskHandler(deps: OsworldTaskHandlerDeps): JobHandler<'osworld-task'> {
  const runSettings = new Map<string, RunSettings>();
  const settingsOf = async (runId: string): Promise<RunSettings> => {
    const cached = runSettings.get(runId);
    if (cached) return cached;
    const run = await runsRepository(deps.db).get(runId);
    if (!run) throw new PermanentTaskError(`run ${runId} does not exist`);
    const config = runConfigSchema.parse(run.config);
    const model = run.model ? (modelSchema.parse(run.model) as BytebotModel) : undefined;
    const settings = { maxSteps: config.max_steps, stallTimeoutMs: config.stall_timeout_seconds * 1000, model };
    runSettings.set(runId, settings);
    return settings;
  };

  return createTaskJobHandler<'osworld-task'>(deps.taskDeps, async (context) => {
    const { runId, taskId } = context.job.payload;
    const settings = await settingsOf(runId);
    // Without a model on the run, the stack's first model, asked once per run as the original does.
    settings.model ??= await deps.client.resolveModel(undefined, { signal: context.signal });
    if (context.previousExternalId) {
      const leftover = await cancelLeftoverTask(deps.client, context.previousExternalId, { signal: context.signal });
      context.logger.info({ bytebotTask: context.previousExternalId, leftover }, 'cancelled the task an earlier attempt left behind');
    }
    const outcome = await runOsworldEpisode({
      client: deps.client,
      task: { task_id: taskId, instruction: context.task.instruction },
      ...(settings.model ? { model: settings.model } : {}),
      maxSteps: settings.maxSteps,
      stallTimeoutMs: settings.stallTimeoutMs,
      signal: context.signal,
      events: deps.events,
      logger: context.logger,
      sink: {
        onTaskCreated: (bytebotTaskId) => context.setExternalId(bytebotTaskId),
        onStep: async (step) => {
          const screenshotUri = step.screenshot
            ? await deps.artifacts.put([runId, taskId, `attempt-${context.attempt}`, `step_${String(step.step_number).padStart(3, '0')}.png`], step.screenshot)
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
      finalApiStatus: outcome.final_api_status,
      totalSteps: outcome.total_steps,
      success: outcome.status === 'success',
      reward: outcome.status === 'success' ? 1 : 0,
      durationMs: outcome.duration_seconds * 1000,
      answer: outcome.answer,
      error: outcome.error_message,
      externalId: outcome.bytebot_task_id || null,
      result: {
        bytebot_task_id: outcome.bytebot_task_id,
        start_time: outcome.start_time,
        end_time: outcome.end_time,
        duration_seconds: outcome.duration_seconds,
        stop_reason: outcome.stop_reason,
        model: settings.model,
      },
    };
  });
}
