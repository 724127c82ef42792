import { PermanentError, errorMessage } from '@benchfleet/core';
import { createBenchmarkTaskHandler, type TaskProcessorDeps } from '@benchfleet/runs';
import { runWebshopEpisode } from '@benchfleet/webshop';
import { createAgent, type AgentRuntime, type WebshopAgent } from '@benchfleet/webshop-agents';
import { webshopBenchmark, type StoreCache } from '@benchfleet/webshop-benchmark';

export interface WebshopEpisodeHandlerDeps {
  taskDeps: TaskProcessorDeps;
  stores: StoreCache;
  /** The API key, price table and LLM governor: from this worker's environment, never from the job. */
  agentRuntime: AgentRuntime;
}

/** The `webshop-episode` job: one goal played by the run's agent on the shared store. */
export function createWebshopEpisodeHandler(deps: WebshopEpisodeHandlerDeps) {
  const agents = new Map<string, WebshopAgent>();
  const agentOf = (runId: string, config: unknown): WebshopAgent => {
    let agent = agents.get(runId);
    if (!agent) {
      try {
        agent = createAgent(config ?? { kind: 'rule' }, deps.agentRuntime);
      } catch (error) {
        throw new PermanentError(
          `run ${runId} has an invalid agent config: ${errorMessage(error)}`,
        );
      }
      agents.set(runId, agent);
    }
    return agent;
  };

  return createBenchmarkTaskHandler(webshopBenchmark, deps.taskDeps, async (context) => {
    const { config, spec, run } = context;
    const agent = agentOf(run.id, run.agent);
    const { store } = await deps.stores.get(config.catalog_id);
    const result = await runWebshopEpisode({
      store,
      agent,
      goalIndex: spec.goal_index,
      maxSteps: config.max_steps,
      observationMode: config.observation_mode,
      signal: context.signal,
      llm: {
        attribution: { runId: run.id, taskId: context.task.task_id, attempt: context.attempt },
      },
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
      error:
        result.stopReason === 'step_limit'
          ? `step limit of ${config.max_steps} reached without buying`
          : null,
      result: {
        goal_index: spec.goal_index,
        stop_reason: result.stopReason,
        purchased_asin: result.purchase?.asin ?? null,
        purchased_options: result.purchase?.options ?? null,
        price: result.purchase?.price ?? null,
        reward_info: result.purchase?.rewardInfo ?? null,
        invalid_steps: result.invalidSteps,
        agent: agent.name,
      },
    };
  });
}
