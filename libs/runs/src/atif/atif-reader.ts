import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { atifTrajectorySchema, type AtifContentPart, type AtifTrajectory } from './atif-schema.js';

/** One thing wrong with a trajectory: where (`steps[2].metrics.prompt_tokens`) and what. */
export interface AtifIssue {
  readonly path: string;
  readonly message: string;
}

/** A document that is not an ATIF trajectory; `issues` lists everything wrong, not only the first. */
export class AtifValidationError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly AtifIssue[],
  ) {
    super(
      `${source} is not a valid ATIF trajectory: ${issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ')}`,
    );
    this.name = 'AtifValidationError';
  }
}

function pathText(segments: readonly PropertyKey[]): string {
  return segments
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
    )
    .join('');
}

/**
 * Zod issues as field paths and messages. For a field that may be a string or an array of content
 * parts, the branch matching what the value is says what is wrong inside it.
 */
function issuesOf(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PropertyKey[] = [],
): AtifIssue[] {
  return issues.flatMap((issue) => {
    const at = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      const inside = issue.errors.filter((branch) => branch.some((inner) => inner.path.length > 0));
      if (inside.length === 1) return issuesOf(inside[0]!, at);
      return [{ path: pathText(at), message: 'expected a string or an array of content parts' }];
    }
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({
        path: pathText([...at, key]),
        message: 'not an ATIF field (custom data goes in an extra object)',
      }));
    return [{ path: pathText(at), message: issue.message }];
  });
}

/** Validates a parsed JSON value against ATIF-v1.7; throws an AtifValidationError naming every bad field. */
export function parseAtifTrajectory(value: unknown, source = 'the document'): AtifTrajectory {
  const parsed = atifTrajectorySchema.safeParse(value);
  if (!parsed.success) throw new AtifValidationError(source, issuesOf(parsed.error.issues));
  return parsed.data;
}

/** Reads and validates one trajectory file. */
export async function readAtifTrajectoryFile(file: string): Promise<AtifTrajectory> {
  const text = await readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AtifValidationError(file, [
      { path: '', message: `not JSON (${error instanceof Error ? error.message : String(error)})` },
    ]);
  }
  return parseAtifTrajectory(value, file);
}

/** Every image a trajectory (and its embedded subagents) refers to, in order. */
export function atifImageParts(
  trajectory: AtifTrajectory,
): Array<Extract<AtifContentPart, { type: 'image' }>> {
  const images: Array<Extract<AtifContentPart, { type: 'image' }>> = [];
  const collect = (content: unknown) => {
    if (!Array.isArray(content)) return;
    for (const part of content as AtifContentPart[]) if (part.type === 'image') images.push(part);
  };
  for (const step of trajectory.steps) {
    collect(step.message);
    for (const result of step.observation?.results ?? []) collect(result.content);
  }
  for (const subagent of trajectory.subagent_trajectories ?? [])
    images.push(...atifImageParts(subagent));
  return images;
}

/**
 * Where an image path points on disk for a trajectory stored at `trajectoryFile`: relative paths
 * are from the trajectory's directory; undefined for a URL.
 */
export function atifImageFile(trajectoryFile: string, imagePath: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(imagePath)) return undefined;
  return path.resolve(path.dirname(trajectoryFile), imagePath);
}
