import type { BenchmarkScorer, ScoreRecord } from '@benchfleet/benchmark-kit';
import type { Database } from '@benchfleet/db';
import {
  defaultNounExtractor,
  getReward,
  type CatalogStoreProduct,
  type WebshopGoal,
} from '@benchfleet/webshop';
import type { StoreCache } from './catalog-store-loader.js';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import type { WebshopRunConfig, WebshopTaskResult, WebshopTaskSpec } from './webshop-run-config.js';

// WebShop's score: the original's `get_reward` of the purchase the episode recorded (its product,
// chosen options and hidden price) against the task's goal; success is reward = 1. An episode that
// bought nothing scores 0, as in the original. Two readers of the same catalog, one rule:
// `scheduler rescore` reads the goal and the product from Postgres (`webshopScorer`, the
// descriptor's); a worker scoring the task it has just played reads them from the store its
// episodes share (`webshopSettleScorer`), where that episode has just loaded both.

type WebshopRecord = ScoreRecord<WebshopRunConfig, WebshopTaskSpec, WebshopTaskResult>;
type WebshopScorer = BenchmarkScorer<WebshopRunConfig, WebshopTaskSpec, WebshopTaskResult>;

/** A purchase to score: the catalog, the goal, the product and the options the episode chose. */
interface Purchase {
  readonly catalogId: string;
  readonly goalIndex: number;
  readonly asin: string;
  readonly options: Readonly<Record<string, string>>;
}

/** `get_reward` of a purchase, read from wherever the scorer reads the catalog. */
type PurchaseReward = (
  purchase: Purchase,
  db: Database,
) => Promise<{
  readonly reward: number;
  /** The original's verbose reward info (`r_type`, `r_att`, `w_att`, …). */
  readonly info: Readonly<Record<string, unknown>>;
  /** The product's hidden price. */
  readonly price: number;
}>;

/** Bump when the rules change: every rescore records it. */
const WEBSHOP_SCORER_VERSION = 'webshop-get-reward-1';

function scorerReading(rewardOf: PurchaseReward): WebshopScorer {
  return {
    version: WEBSHOP_SCORER_VERSION,
    async score(record: WebshopRecord, { db }) {
      const purchase = record.result;
      if (purchase === null || purchase.purchased_asin === null)
        return {
          success: false,
          reward: 0,
          details: { purchased: false, stop_reason: purchase?.stop_reason ?? null },
        };
      const asin = purchase.purchased_asin;
      const { reward, info, price } = await rewardOf(
        {
          catalogId: record.config.catalog_id,
          goalIndex: record.spec.goal_index,
          asin,
          options: purchase.purchased_options ?? {},
        },
        db,
      ).catch((error: unknown) => {
        throw new Error(
          `cannot score task ${record.taskId}: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      return {
        success: reward === 1,
        reward,
        details: { purchased: true, asin, price, reward_info: info },
      };
    },
  };
}

/** The goal and the product as stored in Postgres: two reads. */
const rewardFromPostgres: PurchaseReward = async (purchase, db) => {
  const { catalogId, goalIndex, asin } = purchase;
  const repository = new WebshopCatalogRepository(db);
  const [[goalRow], [productRow]] = await Promise.all([
    repository.goalsByIndex(catalogId, [goalIndex]),
    repository.productsByAsin(catalogId, [asin]),
  ]);
  if (goalRow === undefined || productRow === undefined)
    throw new Error(
      `WebShop catalog ${catalogId} has no ${goalRow === undefined ? `goal ${goalIndex}` : `product ${asin}`} (was it re-imported without it?)`,
    );
  const score = getReward(
    productRow.product as unknown as CatalogStoreProduct,
    goalRow.goal as unknown as WebshopGoal,
    productRow.price,
    purchase.options,
    { nounExtractor: defaultNounExtractor() },
  );
  return { ...score, price: productRow.price };
};

/** WebShop's scorer from Postgres alone: `scheduler rescore`, and any process without a store. */
export const webshopScorer: WebshopScorer = scorerReading(rewardFromPostgres);

/**
 * The scorer a WebShop worker applies when a task settles: the goal and the product from the
 * stores its episodes share (the same `get_reward`, with the same noun extractor), which the
 * episode that bought it has just loaded; Postgres is read only for what the store's caches have
 * dropped meanwhile.
 */
export function webshopSettleScorer(stores: Pick<StoreCache, 'get'>): WebshopScorer {
  return scorerReading(async (purchase) => {
    const { store } = await stores.get(purchase.catalogId);
    return store.scorePurchase(
      purchase.goalIndex,
      purchase.asin,
      new Map(Object.entries(purchase.options)),
    );
  });
}
