import { z } from 'zod';

export const WEBSHOP_SPLITS = {
  test: [0, 499],
  eval: [500, 1499],
  train: [1500, Number.MAX_SAFE_INTEGER],
} as const;

/** Owns a WebShop run's `runs.config`; the defaults are the paper's. */
export const webshopRunConfigSchema = z.object({
  catalog_id: z.string().min(1),
  /** The goal split the run plays, or null when `goals` names the goals. */
  split: z.enum(['test', 'eval', 'train']).nullable().default('test'),
  goals: z.string().nullable().default(null),
  max_steps: z.number().int().positive().default(15),
  observation_mode: z.enum(['text', 'text_rich']).default('text'),
});
export type WebshopRunConfig = z.output<typeof webshopRunConfigSchema>;

/** Owns a WebShop task's `tasks.spec`: the goal the episode plays. */
export const webshopTaskSpecSchema = z.object({
  goal_index: z.number().int().nonnegative(),
  split: z.enum(['test', 'eval', 'train']),
  asin: z.string(),
});
export type WebshopTaskSpec = z.output<typeof webshopTaskSpecSchema>;

/** Owns a WebShop task's `tasks.result`: the purchase and the reward's parts. */
export const webshopTaskResultSchema = z.looseObject({
  goal_index: z.number(),
  stop_reason: z.enum(['bought', 'step_limit']),
  purchased_asin: z.string().nullable(),
  purchased_options: z.record(z.string(), z.string()).nullable(),
  price: z.number().nullable(),
  reward_info: z.record(z.string(), z.unknown()).nullable(),
  invalid_steps: z.number(),
  agent: z.string(),
});
export type WebshopTaskResult = z.output<typeof webshopTaskResultSchema>;

/** A step's `steps.action`: the agent's decision. */
export const webshopStepActionSchema = z.looseObject({
  action: z.string(),
  kind: z.string(),
  valid: z.boolean(),
  invalid_reason: z.string().optional(),
  thought: z.string().optional(),
});
