import { Option } from 'commander';
import { z } from 'zod';
import { errorMessage } from './errors.js';

// Settings declared once, as a zod object whose fields say how the user gives them (a flag, an
// environment variable, or both): the CLI's options, the values read and the one message naming
// every bad value all come from that object.

/** How one setting is given. */
export interface FlagMeta {
  /**
   * In commander's syntax: `--index-cache <dir>`, `--no-events`. Default `--<key-in-kebab-case>
   * <key-in-kebab-case>`; null: read from the environment only (a secret, a tuning knob).
   */
  readonly flag?: string | null;
  /** For `--help`; the environment variable is added to it. */
  readonly description: string;
  /** Read when the flag is not given (an empty value counts as unset). */
  readonly env?: string;
}

const META_KEY = 'benchfleetFlag';

/** Declares how a setting is given: `flag(z.coerce.number().default(32), { description, env })`. */
export function flag<T extends z.ZodType>(schema: T, meta: FlagMeta): T {
  return schema.meta({ description: meta.description, [META_KEY]: meta }) as T;
}

/** One field of a settings object, as the CLI and the parser see it. */
export interface FlagField {
  /** The field's key in the object. */
  readonly key: string;
  readonly meta: FlagMeta;
  /** Commander's syntax, or null for an environment-only setting. */
  readonly syntax: string | null;
  /** `--llm-base-url` (`--no-llm-check` → `--llm-check`), or null. */
  readonly long: string | null;
  /** Where commander keeps the value: `--llm-base-url` → `llmBaseUrl`. */
  readonly attribute: string | null;
  /** How a message names it: `--concurrency (or BENCHFLEET_CONCURRENCY)`, `BENCHFLEET_LOCK_MS`. */
  readonly label: string;
  readonly schema: z.ZodType;
}

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** `--llm-base-url <url>` → `--llm-base-url`; `--no-llm-check` → `--llm-check`. */
export function longFlag(syntax: string): string {
  return (
    syntax
      .split(/[ ,<[]/)
      .find((part) => part.startsWith('--'))
      ?.replace(/^--no-/, '--') ?? syntax
  );
}

/** The attribute commander stores a flag's value under: `--llm-base-url` → `llmBaseUrl`. */
export function flagAttribute(syntax: string): string {
  return longFlag(syntax)
    .slice(2)
    .replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** The fields of a settings object, in declaration order; a field without `flag()` is refused. */
export function flagFields(settings: z.ZodObject): FlagField[] {
  return Object.entries(settings.shape).map(([key, schema]) => {
    const meta = (schema as z.ZodType).meta()?.[META_KEY] as FlagMeta | undefined;
    if (!meta) throw new Error(`setting ${key} says nothing of how it is given: wrap it in flag()`);
    const syntax = meta.flag === null ? null : (meta.flag ?? `--${kebab(key)} <${kebab(key)}>`);
    const long = syntax === null ? null : longFlag(syntax);
    const label = long === null ? (meta.env ?? key) : meta.env ? `${long} (or ${meta.env})` : long;
    return {
      key,
      meta,
      syntax,
      long,
      attribute: syntax === null ? null : flagAttribute(syntax),
      label,
      schema: schema as z.ZodType,
    };
  });
}

/** The values an enum setting allows, for `--help`. */
function choicesOf(schema: z.ZodType): readonly string[] | undefined {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault)
    inner = inner.unwrap() as z.ZodType;
  return inner instanceof z.ZodEnum ? (inner.options as string[]) : undefined;
}

/** Commander options for the settings that have a flag; values are parsed later, all at once. */
export function flagOptions(settings: z.ZodObject): Option[] {
  return flagFields(settings)
    .filter((field) => field.syntax !== null)
    .map((field) => {
      const choices = choicesOf(field.schema);
      const text = `${field.meta.description}${choices ? ` (${choices.join(', ')})` : ''}${field.meta.env ? ` (or ${field.meta.env})` : ''}`;
      return new Option(field.syntax!, text);
    });
}

/**
 * The raw value of each setting, by key: the flag as given (commander's values, by attribute),
 * else its environment variable; unset ones are absent, for the schema's defaults.
 */
export function flagInput(
  settings: z.ZodObject,
  given: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of flagFields(settings)) {
    const value =
      (field.attribute === null ? undefined : given[field.attribute]) ??
      (field.meta.env ? env[field.meta.env] || undefined : undefined);
    if (value !== undefined) input[field.key] = value;
  }
  return input;
}

/** How each setting is named in a message, by key. */
export function flagLabels(settings: z.ZodObject): Record<string, string> {
  return Object.fromEntries(flagFields(settings).map((field) => [field.key, field.label]));
}

/**
 * A text setting parsed by a function that throws a message saying what it expects (the CLI value
 * parsers: `positiveInteger`, `httpUrl`…); the message becomes the setting's issue.
 */
export function parsedText<T>(parse: (text: string) => T): z.ZodType<T, string> {
  return z.string().transform((text, context) => {
    try {
      return parse(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: errorMessage(error) });
      return z.NEVER;
    }
  });
}

/** One of a few words, refused with the list: `expected one of test, eval, train`. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `expected one of ${values.join(', ')}` });
}
