import { z } from 'zod';

// Raw inputs: only the fields `load_products` reads are checked; other keys pass through untouched.

const rawOptionEntrySchema = z.looseObject({
  value: z.string(),
  image: z.string().nullable().optional(),
});

const rawCustomizationOptionsSchema = z.union([
  z.literal(''),
  z.null(),
  z.record(z.string(), z.array(rawOptionEntrySchema).nullable()),
]);

export const rawProductAsinSchema = z.looseObject({ asin: z.string() });

export const rawProductSchema = z.looseObject({
  asin: z.string(),
  name: z.string(),
  full_description: z.string(),
  small_description: z.union([z.string(), z.array(z.string())]),
  pricing: z.string().nullable().optional(),
  customization_options: rawCustomizationOptionsSchema,
  images: z.array(z.string()).min(1),
  query: z.string(),
  category: z.string(),
  product_category: z.string(),
});

/** One entry of items_ins_v2*.json (keyed by asin). */
export const attributeEntrySchema = z.looseObject({
  attributes: z.array(z.string()).optional(),
  instruction: z.string().nullable().optional(),
  instruction_attributes: z.array(z.string()).nullable().optional(),
});
export type AttributeEntry = z.infer<typeof attributeEntrySchema>;

/** One instruction of items_human_ins.json (a list of these per asin). */
export const humanInstructionSchema = z.looseObject({
  asin: z.string().optional(),
  instruction: z.string(),
  attributes: z.array(z.string()).optional(),
  options: z.array(z.string()).optional(),
  instruction_attributes: z.array(z.string()),
  instruction_options: z.array(z.string()),
  assignment_id: z.string().optional(),
  worker_id: z.string().optional(),
});
export type HumanInstruction = z.infer<typeof humanInstructionSchema>;

// Processed product, as `load_products` leaves it (minus the raw keys nothing reads).
export const webshopProductSchema = z.object({
  asin: z.string(),
  name: z.string(),
  Title: z.string(),
  Description: z.string(),
  BulletPoints: z.array(z.string()),
  Reviews: z.tuple([]),
  Rating: z.literal('N.A.'),
  pricing: z.array(z.number()),
  Price: z.string(),
  options: z.record(z.string(), z.array(z.string())),
  option_to_image: z.record(z.string(), z.string().nullable()),
  Attributes: z.array(z.string()),
  MainImage: z.string(),
  query: z.string(),
  category: z.string(),
  product_category: z.string(),
  /** Human goal mode only, and only when the asin has human instructions. */
  instructions: z.array(humanInstructionSchema).optional(),
  /** Synthetic goal mode only. */
  instruction_text: z.string().nullable().optional(),
  instruction_attributes: z.array(z.string()).nullable().optional(),
  customization_options: rawCustomizationOptionsSchema,
  full_description: z.string(),
  small_description: z.union([z.string(), z.array(z.string())]),
  images: z.array(z.string()),
});
export type WebshopProduct = z.infer<typeof webshopProductSchema>;

/** Human goals carry a list of option values; synthetic goals a `{option name: value}` dict. */
const webshopGoalOptionsSchema = z.union([z.array(z.string()), z.record(z.string(), z.string())]);
export type WebshopGoalOptions = z.infer<typeof webshopGoalOptionsSchema>;

export const webshopGoalSchema = z.object({
  asin: z.string(),
  category: z.string(),
  query: z.string(),
  name: z.string(),
  product_category: z.string(),
  instruction_text: z.string(),
  attributes: z.array(z.string()),
  /** 10.0 … 990.0, or the int 1000000 when no price limit was drawn. */
  price_upper: z.number(),
  goal_options: webshopGoalOptionsSchema,
  weight: z.number(),
});
export type WebshopGoal = z.infer<typeof webshopGoalSchema>;
