import { beforeAll, describe, expect, it } from 'vitest';
import type { ScoreRecord } from '@benchfleet/benchmark-kit';
import { useTestServices } from '@benchfleet/testing';
import { runWebshopEpisode, type EpisodeResult } from '@benchfleet/webshop';
import { RuleAgent } from '@benchfleet/webshop-agents';
import { demoCatalogRequest, importWebshopCatalog } from './catalog-import.js';
import { loadStoreFromDatabase } from './catalog-store-loader.js';
import type { WebshopRunConfig, WebshopTaskResult, WebshopTaskSpec } from './webshop-run-config.js';
import { webshopScorer as sut } from './webshop-scorer.js';

// WebShop's scorer reads the purchase an episode recorded and the catalog in Postgres: it must give
// exactly the reward the store gave in the episode (the original's get_reward), for every goal.

const services = useTestServices();
const config: WebshopRunConfig = {
  catalog_id: 'demo',
  split: 'test',
  goals: null,
  max_steps: 15,
  observation_mode: 'text',
};

beforeAll(async () => {
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

/** The record a settled task keeps, as the WebShop worker writes its result. */
function recordOf(
  goalIndex: number,
  result: Pick<EpisodeResult, 'stopReason' | 'purchase' | 'steps'>,
): ScoreRecord<WebshopRunConfig, WebshopTaskSpec, WebshopTaskResult> {
  return {
    runId: 'r',
    taskId: `goal-${goalIndex}`,
    instruction: '',
    config,
    spec: { goal_index: goalIndex, split: 'test', asin: '' },
    result: {
      goal_index: goalIndex,
      stop_reason: result.stopReason,
      purchased_asin: result.purchase?.asin ?? null,
      purchased_options: result.purchase?.options ?? null,
      price: result.purchase?.price ?? null,
      reward_info: result.purchase?.rewardInfo ?? null,
      invalid_steps: 0,
      agent: 'rule',
    },
    answer: null,
    finalApiStatus: result.stopReason === 'bought' ? 'BOUGHT' : 'STEP_LIMIT',
    totalSteps: result.steps,
  };
}

describe('webshopScorer', () => {
  it('gives every rule episode of 60 goals the reward and success the store gave it', async () => {
    const { store } = await loadStoreFromDatabase(services.db, 'demo');
    const rewards: number[] = [];
    for (let goalIndex = 0; goalIndex < 60; goalIndex += 1) {
      const result = await runWebshopEpisode({
        store,
        agent: new RuleAgent(),
        goalIndex,
        maxSteps: 15,
        signal: new AbortController().signal,
      });
      const score = await sut.score(recordOf(goalIndex, result), { db: services.db });
      expect([goalIndex, score.reward, score.success]).toEqual([
        goalIndex,
        result.reward,
        result.success,
      ]);
      expect(score.details).toMatchObject({ reward_info: result.purchase?.rewardInfo ?? {} });
      rewards.push(result.reward);
    }
    // The comparison covers partial rewards, not only 0 and 1.
    expect(rewards.some((reward) => reward > 0 && reward < 1)).toBe(true);
  });

  it('scores an episode that bought nothing 0, without reading the catalog', async () => {
    const score = await sut.score(
      recordOf(3, { stopReason: 'step_limit', purchase: null, steps: 15 }),
      { db: services.db },
    );
    expect(score).toEqual({
      success: false,
      reward: 0,
      details: { purchased: false, stop_reason: 'step_limit' },
    });
  });

  it('refuses a purchase the catalog no longer holds, naming it (a fault, never a score)', async () => {
    const record = recordOf(0, {
      stopReason: 'bought',
      steps: 3,
      purchase: { asin: 'B0NOSUCH00', options: {}, price: 1, rewardInfo: {} },
    });
    await expect(sut.score(record, { db: services.db })).rejects.toThrow(
      /WebShop catalog demo has no product B0NOSUCH00/,
    );
  });
});
