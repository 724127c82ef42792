import { z } from 'zod';

// The Agent Trajectory Interchange Format, pinned at ATIF-v1.7: Harbor's RFC 0001 "Agent Trajectory
// Interchange Format (ATIF) Specification" (harbor-framework/harbor, rfcs/0001-trajectory-format.md;
// Status Active, April 2026, Changelog v1.7), section II (Schema) and the validation rules its
// section VI names for the reference implementation (sequential step ids, ISO 8601 timestamps,
// agent-only fields, tool-call references), plus the v1.7 rules on llm_call_count, trajectory_id
// and subagent references. Written here from that text; no code of Harbor's is used.
// Required and optional are as the RFC's tables say; an optional field may be absent or null, as
// the reference models accept; keys the RFC does not define are refused (they go in `extra`).

/** The version this fleet writes. */
export const ATIF_SCHEMA_VERSION = 'ATIF-v1.7';

/** Every version a v1.7 reader accepts: later minor versions only added optional fields. */
const ATIF_SCHEMA_VERSIONS = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
  'ATIF-v1.7',
] as const;

/** ImageSourceSchema (v1.6+): the only media types the RFC allows. */
const ATIF_IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

const jsonObject = z.record(z.string(), z.unknown());
const optionalObject = jsonObject.nullish();
const optionalString = z.string().nullish();
const optionalInt = z.int().nullish();

/** YYYY-MM-DD, optionally with a time (fraction and offset optional): what Python's `fromisoformat` reads once `Z` is `+00:00`. */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d+)?)?)?)?)?$/;

/** Whether `text` is an ISO 8601 date or date-time with a real calendar date and clock time. */
export function isIso8601Timestamp(text: string): boolean {
  const match = ISO_8601.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match
    .slice(1, 7)
    .map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month! - 1 &&
    date.getUTCDate() === day &&
    hour! < 24 &&
    minute! < 60 &&
    second! < 60
  );
}

const atifImageSourceSchema = z.strictObject({
  media_type: z.enum(ATIF_IMAGE_MEDIA_TYPES),
  /** Relative or absolute file path, or a URL; relative paths are from the trajectory file's directory. */
  path: z.string(),
});

/** ContentPartSchema (v1.6+): text, or an image by reference; the other field must be omitted. */
const atifContentPartSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string(), source: z.null().optional() }),
  z.strictObject({
    type: z.literal('image'),
    source: atifImageSourceSchema,
    text: z.null().optional(),
  }),
]);

/** A `message` or observation `content`: a string, or (v1.6+) an array of content parts. */
const atifContentSchema = z.union([z.string(), z.array(atifContentPartSchema)]);

const atifToolCallSchema = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  /** A JSON object, possibly empty. */
  arguments: jsonObject,
  extra: optionalObject,
});

const atifMetricsSchema = z.strictObject({
  /** All input tokens of the turn, cached ones included. */
  prompt_tokens: optionalInt,
  completion_tokens: optionalInt,
  /** The part of `prompt_tokens` served from a cache. */
  cached_tokens: optionalInt,
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.int()).nullish(),
  completion_token_ids: z.array(z.int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: optionalObject,
});

const atifSubagentTrajectoryRefSchema = z
  .strictObject({
    /** Resolves against `trajectory_id` of an entry in the root's `subagent_trajectories`. */
    trajectory_id: optionalString,
    /** An external trajectory file (path, S3 URL, database reference). */
    trajectory_path: optionalString,
    /** Informational only: never a resolution key. */
    session_id: optionalString,
    extra: optionalObject,
  })
  .superRefine((ref, context) => {
    if (ref.trajectory_id == null && ref.trajectory_path == null)
      context.addIssue({
        code: 'custom',
        message:
          'a subagent reference needs trajectory_id or trajectory_path (session_id alone does not resolve)',
      });
  });

const atifObservationResultSchema = z.strictObject({
  /** The `tool_call_id` of a tool call of the same step; absent for results of other actions. */
  source_call_id: optionalString,
  content: atifContentSchema.nullish(),
  subagent_trajectory_ref: z.array(atifSubagentTrajectoryRefSchema).nullish(),
  extra: optionalObject,
});

const atifObservationSchema = z.strictObject({
  results: z.array(atifObservationResultSchema),
});

/** Fields only an agent step may carry. */
const AGENT_ONLY_FIELDS = [
  'model_name',
  'reasoning_effort',
  'reasoning_content',
  'tool_calls',
  'metrics',
] as const;

const atifStepSchema = z
  .strictObject({
    /** Ordinal from 1, sequential in the trajectory. */
    step_id: z.int().min(1),
    timestamp: z
      .string()
      .refine(isIso8601Timestamp, { message: 'expected an ISO 8601 timestamp' })
      .nullish(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: optionalString,
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    /** Required, possibly empty. */
    message: atifContentSchema,
    reasoning_content: optionalString,
    tool_calls: z.array(atifToolCallSchema).nullish(),
    observation: atifObservationSchema.nullish(),
    metrics: atifMetricsSchema.nullish(),
    /** Added in v1.7: LLM inferences the step stands for; 0 on an agent step is a deterministic dispatch. */
    llm_call_count: z.int().min(0).nullish(),
    is_copied_context: z.boolean().nullish(),
    extra: optionalObject,
  })
  .superRefine((step, context) => {
    if (step.source !== 'agent') {
      for (const field of AGENT_ONLY_FIELDS) {
        if (step[field] != null)
          context.addIssue({
            code: 'custom',
            path: [field],
            message: `only an agent step may have ${field} (this step's source is ${step.source})`,
          });
      }
    } else if (step.llm_call_count === 0) {
      for (const field of ['metrics', 'reasoning_content'] as const) {
        if (step[field] != null)
          context.addIssue({
            code: 'custom',
            path: [field],
            message: `must be absent when llm_call_count is 0 (a deterministic dispatch)`,
          });
      }
    }
    const ids = new Set<string>();
    for (const [index, call] of (step.tool_calls ?? []).entries()) {
      if (ids.has(call.tool_call_id))
        context.addIssue({
          code: 'custom',
          path: ['tool_calls', index, 'tool_call_id'],
          message: `duplicate tool_call_id ${JSON.stringify(call.tool_call_id)} in step ${step.step_id}`,
        });
      ids.add(call.tool_call_id);
    }
    for (const [index, result] of (step.observation?.results ?? []).entries()) {
      if (result.source_call_id != null && !ids.has(result.source_call_id))
        context.addIssue({
          code: 'custom',
          path: ['observation', 'results', index, 'source_call_id'],
          message: `${JSON.stringify(result.source_call_id)} is not the tool_call_id of a tool call of step ${step.step_id}`,
        });
    }
  });

const atifFinalMetricsSchema = z.strictObject({
  total_prompt_tokens: optionalInt,
  total_completion_tokens: optionalInt,
  total_cached_tokens: optionalInt,
  total_cost_usd: z.number().nullish(),
  /** May differ from the length of `steps` when `notes` says why. */
  total_steps: optionalInt,
  extra: optionalObject,
});

const atifAgentSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  /** The default model; a step's `model_name` overrides it. */
  model_name: optionalString,
  /** OpenAI function-calling definitions: `{type, function}` each. */
  tool_definitions: z.array(jsonObject).nullish(),
  extra: optionalObject,
});

const atifTrajectoryFields = {
  schema_version: z.enum(ATIF_SCHEMA_VERSIONS),
  /** Run-scoped: trajectories of one logical run may share it. Optional since v1.7. */
  session_id: optionalString,
  /** Added in v1.7: identifies this document; required on embedded subagent trajectories. */
  trajectory_id: optionalString,
  agent: atifAgentSchema,
  steps: z.array(atifStepSchema).min(1),
  notes: optionalString,
  final_metrics: atifFinalMetricsSchema.nullish(),
  continued_trajectory_ref: optionalString,
  extra: optionalObject,
};

type AtifTrajectoryFields = z.output<z.ZodObject<typeof atifTrajectoryFields>>;

/** A whole trajectory document; embedded subagents are trajectories too (added in v1.7). */
export type AtifTrajectory = AtifTrajectoryFields & {
  subagent_trajectories?: AtifTrajectory[] | null | undefined;
};
export type AtifStep = z.output<typeof atifStepSchema>;
export type AtifToolCall = z.output<typeof atifToolCallSchema>;
export type AtifObservationResult = z.output<typeof atifObservationResultSchema>;
export type AtifContentPart = z.output<typeof atifContentPartSchema>;
export type AtifImageMediaType = (typeof ATIF_IMAGE_MEDIA_TYPES)[number];

export const atifTrajectorySchema: z.ZodType<AtifTrajectory> = z
  .strictObject({
    ...atifTrajectoryFields,
    subagent_trajectories: z.array(z.lazy(() => atifTrajectorySchema)).nullish(),
  })
  .superRefine((trajectory, context) => {
    for (const [index, step] of trajectory.steps.entries()) {
      if (step.step_id !== index + 1)
        context.addIssue({
          code: 'custom',
          path: ['steps', index, 'step_id'],
          message: `expected ${index + 1} (step ids are sequential from 1), got ${step.step_id}`,
        });
    }
    const embedded = new Set<string>();
    for (const [index, subagent] of (trajectory.subagent_trajectories ?? []).entries()) {
      const id = subagent.trajectory_id;
      if (id == null)
        context.addIssue({
          code: 'custom',
          path: ['subagent_trajectories', index, 'trajectory_id'],
          message: 'required on an embedded subagent trajectory',
        });
      else if (embedded.has(id))
        context.addIssue({
          code: 'custom',
          path: ['subagent_trajectories', index, 'trajectory_id'],
          message: `${JSON.stringify(id)} is not unique within subagent_trajectories`,
        });
      else embedded.add(id);
    }
  });
