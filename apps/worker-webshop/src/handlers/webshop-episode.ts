import { z } from 'zod';
import { runsRepository, type Database } from '@benchfleet/db';
import { createAgent, type AgentRuntime, type WebshopAgent } from '@benchfleet/agents';
import { createTaskJobHandler, PermanentTaskError, type JobHandler, type TaskProcessorDeps } from '@benchfleet/queue';
import type { StoreCache } from '@benchfleet/catalog-store';
import { runWebshopEpisode } from '../webshop-episode-runner.js';

const runConfigSchema = z.object({
  catalog_id: z.string(),
  max_steps: z.number().int().positive().default(15),
  observation_mode: z.enum(['text', 'text_rich']).default('text'),
});

interface RunSettings {
  catalogId: string;
  maxSteps: number;
  observationMode: 'text' | 'text_rich';
  agent: WebshopAgent;
}

export interface WebshopEpisodeHandlerDeps {
  db: Database;
  taskDeps: TaskProcessorDeps;
  stores: StoreCache;
  /** The API key and price table: from this worker's environment, never from the job. */
  agentRuntime: AgentRuntime;
}

/** The `webshop-episode` job: one goal played by the run's agent on the shared store. */
export function createWebshopEpisodeHandler(deps: WebshopEpisodeHandlerDeps): JobHandler<'webshop-episode'> {
  const runSettings = new Map<string, Promise<RunSettings>>();
  const settingsOf = (runId: string): Promise<RunSettings> => {
    let settings = runSettings.get(runId);
    if (!settings) {
      settings = (async () => {
        const run = await runsRepository(deps.db).get(runId);
        if (!run) throw new PermanentTaskError(`run ${runId} does not exist`);
        const config = runConfigSchema.safeParse(run.config);
        if (!config.success) throw new PermanentTaskError(`run ${runId} has an invalid WebShop config: ${config.error.message}`);
        let agent: WebshopAgent;
        try {
          agent = createAgent(run.agent ?? { kind: 'rule' }, deps.agentRuntime);
        } catch (error) {
          throw new PermanentTaskError(`run ${runId} has an invalid agent config: ${(error as Error).message}`);
        }
        return { catalogId: config.data.catalog_id, maxSteps: config.data.max_steps, observationMode: config.data.observation_mode, agent };
      })();
      settings.catch(() => runSettings.delete(runId));
      runSettings.set(runId, settings);
    }
    return settings;
  };

  return createTaskJobHandler<'webshop-episode'>(deps.taskDeps, async (context) => {
    const { runId, goalIndex } = context.job.payload;
    const settings = await settingsOf(runId);
    const { store } = await deps.stores.get(settings.catalogId);
    const result = await runWebshopEpisode({
      store,
      agent: settings.agent,
      goalIndex,
      maxSteps: settings.maxSteps,
      observationMode: settings.observationMode,
      signal: context.signal,
      onStep: (step) =>
        context.recordStep({
          step: step.step,
          action: JSON.stringify(step.action),
          text: step.raw,
          observation: step.observation,
          reward: step.reward,
          tokens_in: step.tokensIn,
          tokens_out: step.tokensOut,
          latency_ms: step.latencyMs,
        }),
    });
    return {
      status: result.success ? 'success' : 'failed',
      finalApiStatus: result.stopReason === 'bought' ? 'BOUGHT' : 'STEP_LIMIT',
      totalSteps: result.steps,
      reward: result.reward,
      success: result.success,
      tokensIn: result.tokensIn,
      tokensOut: result.tokensOut,
      costUsd: result.costUsd,
      error: result.stopReason === 'step_limit' ? `step limit of ${settings.maxSteps} reached without buying` : null,
      result: {
        goal_index: goalIndex,
        stop_reason: result.stopReason,
        purchased_asin: result.purchase?.asin ?? null,
        purchased_options: result.purchase?.options ?? null,
        price: result.purchase?.price ?? null,
        reward_info: result.purchase?.rewardInfo ?? null,
        invalid_steps: result.invalidSteps,
        agent: settings.agent.name,
      },
    };
  });
}
