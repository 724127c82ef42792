import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readArtifact, type ArtifactSettings } from '@benchfleet/artifacts';
import { errorMessage } from '@benchfleet/core';
import type { Step } from '@benchfleet/db';
import type { AtifImageMediaType } from './atif-schema.js';
import type { AtifScreenshot } from './atif-trajectory.js';

// A step's screenshot copied out of the artifact store beside a trajectory that references it by
// relative path (ATIF's image source), for every export that writes trajectories.

const IMAGE_EXTENSIONS: Record<AtifImageMediaType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** The ATIF media type of an image, from its first bytes; undefined for any other format. */
function imageMediaType(bytes: Buffer): AtifImageMediaType | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = bytes.subarray(0, 12).toString('latin1');
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

export interface ScreenshotCopy {
  readonly artifacts: ArtifactSettings;
  /** Where the artifact store holds it. */
  readonly uri: string;
  /** The trajectory's directory: the image's path is relative to it. */
  readonly dir: string;
  /** The image's path under `dir`, without its extension (the image's format gives that). */
  readonly name: string;
  /** Which step it is, for a problem's line. */
  readonly where: string;
  /** A screenshot that cannot be had is one line here, not a failed export. */
  readonly problems: string[];
}

/** Copies one screenshot; what the trajectory says of it: its file, or why there is none. */
async function copyStepScreenshot(copy: ScreenshotCopy): Promise<AtifScreenshot> {
  const { uri, where, problems } = copy;
  let bytes: Buffer;
  try {
    bytes = await readArtifact(uri, copy.artifacts);
  } catch (error) {
    const missing = `cannot be read (${errorMessage(error)})`;
    problems.push(`${where}: screenshot ${uri} ${missing}`);
    return { uri, missing };
  }
  const mediaType = imageMediaType(bytes);
  if (mediaType === undefined) {
    const missing = 'is not a PNG, JPEG, GIF or WebP image';
    problems.push(`${where}: screenshot ${uri} ${missing}`);
    return { uri, missing };
  }
  const relative = `${copy.name}.${IMAGE_EXTENSIONS[mediaType]}`;
  const file = path.join(copy.dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, bytes);
  return { uri, path: relative, mediaType };
}

/** The screenshots of an attempt's steps, copied in step order, by step number. */
export async function copyAttemptScreenshots(
  steps: readonly Step[],
  copy: Omit<ScreenshotCopy, 'uri' | 'name' | 'where'> & {
    name(step: Step): string;
    where(step: Step): string;
  },
): Promise<Map<number, AtifScreenshot>> {
  const screenshots = new Map<number, AtifScreenshot>();
  for (const step of steps) {
    if (step.screenshot_uri === null) continue;
    const { name, where, ...rest } = copy;
    const shot = await copyStepScreenshot({
      ...rest,
      uri: step.screenshot_uri,
      name: name(step),
      where: where(step),
    });
    screenshots.set(step.step, shot);
  }
  return screenshots;
}
