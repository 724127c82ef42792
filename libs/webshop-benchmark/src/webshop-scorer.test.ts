import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScoreRecord } from '@benchfleet/benchmark-kit';
import { countingDatabase, useTestServices } from '@benchfleet/testing';
import { runWebshopEpisode, type EpisodeResult } from '@benchfleet/webshop';
import { RuleAgent } from '@benchfleet/webshop-agents';
import { demoCatalogRequest, importWebshopCatalog } from './catalog-import.js';
import {
  loadStoreFromDatabase,
  openStoreFromSnapshot,
  StoreCache,
} from './catalog-store-loader.js';
import type { WebshopRunConfig, WebshopTaskResult, WebshopTaskSpec } from './webshop-run-config.js';
import { webshopScorer as sut, webshopSettleScorer } from './webshop-scorer.js';

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

const cacheDir = mkdtempSync(join(tmpdir(), 'webshop-scorer-'));

beforeAll(async () => {
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

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

  it('at settle reads nothing from Postgres (the worker’s store has the goal and the product), and rescore gives the same score from Postgres alone', async () => {
    // The snapshot copied to this machine first (a COPY on a client of the pool, not counted).
    (await openStoreFromSnapshot(services.db, 'demo', { cacheDir })).close();
    // The worker's store, as `worker-webshop` opens it, every statement it sends counted.
    const worker = countingDatabase(services.db);
    const stores = new StoreCache((catalogId) =>
      openStoreFromSnapshot(worker.db, catalogId, { cacheDir }),
    );
    const { store } = await stores.get('demo');
    const settleScorer = webshopSettleScorer(stores);
    const rescore = countingDatabase(services.db);
    let bought = 0;
    for (let goalIndex = 0; goalIndex < 20; goalIndex += 1) {
      const result = await runWebshopEpisode({
        store,
        agent: new RuleAgent(),
        goalIndex,
        maxSteps: 15,
        signal: new AbortController().signal,
      });
      const record = recordOf(goalIndex, result);
      const sentBySettle = worker.statements.length;
      const atSettle = await settleScorer.score(record, { db: worker.db });
      expect(worker.statements.slice(sentBySettle), `goal ${goalIndex} at settle`).toEqual([]);
      expect([atSettle.reward, atSettle.success]).toEqual([result.reward, result.success]);
      const sentByRescore = rescore.statements.length;
      expect(await sut.score(record, { db: rescore.db })).toEqual(atSettle);
      if (result.purchase === null) continue;
      bought += 1;
      // From Postgres alone: the goal and the product, read by the rescore itself.
      const reads = rescore.statements.slice(sentByRescore);
      expect(reads).toHaveLength(2);
      expect(reads.join('\n')).toMatch(/from webshop_goals[\s\S]*from webshop_products/);
    }
    expect(bought).toBeGreaterThan(0);
    // The count sees the store's own reads: the episodes fetched their goals and products.
    expect(worker.statements.join('\n')).toMatch(/from webshop_goals[\s\S]*from webshop_products/);
  }, 120_000);
});
