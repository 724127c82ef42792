import { z } from 'zod';

// Shapes of the bytebot-agent REST API and Socket.IO payloads (reference: bytebot-api.md §1, §2, §4).
// Objects are loose: the agent sends more fields than the benchmark reads, and they are kept.

const BYTEBOT_TASK_STATUSES = [
  'PENDING',
  'RUNNING',
  'NEEDS_HELP',
  'NEEDS_REVIEW',
  'COMPLETED',
  'CANCELLED',
  'FAILED',
] as const;
export type BytebotTaskStatus = (typeof BYTEBOT_TASK_STATUSES)[number];

/** The end states of the original benchmark (a NEEDS_HELP task waits for a human who never comes). */
const BYTEBOT_END_STATUSES: readonly BytebotTaskStatus[] = [
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'NEEDS_HELP',
  'NEEDS_REVIEW',
];

export function isBytebotEndStatus(status: BytebotTaskStatus): boolean {
  return BYTEBOT_END_STATUSES.includes(status);
}

export const bytebotModelSchema = z.looseObject({
  provider: z.string(),
  name: z.string(),
  title: z.string(),
  contextWindow: z.number().optional(),
});
export type BytebotModel = z.infer<typeof bytebotModelSchema>;

export const bytebotTaskSchema = z.looseObject({
  id: z.string().min(1),
  description: z.string(),
  status: z.enum(BYTEBOT_TASK_STATUSES),
  control: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string().optional(),
  completedAt: z.string().nullish(),
  executedAt: z.string().nullish(),
});
export type BytebotTask = z.infer<typeof bytebotTaskSchema>;

export const bytebotTaskPageSchema = z.looseObject({
  tasks: z.array(bytebotTaskSchema),
  total: z.number(),
  totalPages: z.number(),
});
export type BytebotTaskPage = z.infer<typeof bytebotTaskPageSchema>;

/** A content block: `{type, ...}`; only the fields the benchmark reads are checked, where it reads them. */
const bytebotContentBlockSchema = z.looseObject({ type: z.string() });
export type BytebotContentBlock = z.infer<typeof bytebotContentBlockSchema>;

export const bytebotMessageSchema = z.looseObject({
  id: z.string().min(1),
  role: z.enum(['USER', 'ASSISTANT']),
  content: z.array(bytebotContentBlockSchema),
  createdAt: z.string(),
  taskId: z.string(),
});
export type BytebotMessage = z.infer<typeof bytebotMessageSchema>;
