import { hostname } from 'node:os';
import { z } from 'zod';
import { s3SettingsFromEnv, type ArtifactSettings } from '@benchfleet/artifacts';
import { parseConfig } from '@benchfleet/core';
import {
  WORKER_CONFIG_LABELS,
  workerConfigInput,
  workerConfigShape,
  type WorkerFlags,
} from '@benchfleet/runs';

export interface OsworldWorkerFlags extends Omit<WorkerFlags, 'workerId'> {
  bytebotUrl?: string;
  desktopUrl?: string;
  stackId?: string;
  events?: boolean;
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const schema = z.object({
  ...workerConfigShape,
  artifactsUri: z.string().min(1).default('file://./.benchfleet/artifacts'),
  bytebotUrl: httpUrl,
  desktopUrl: httpUrl.optional(),
  events: z.boolean(),
});

export type OsworldWorkerConfig = z.output<typeof schema> & { artifactSettings: ArtifactSettings };

export function loadOsworldWorkerConfig(
  flags: OsworldWorkerFlags,
  env: NodeJS.ProcessEnv = process.env,
): OsworldWorkerConfig {
  const s3 = s3SettingsFromEnv(env);
  const parsed = parseConfig(
    schema,
    {
      // The worker id is the stack's: an OSWorld worker owns one stack.
      // A Bytebot task cannot be handed over mid-way: by default an OSWorld worker lets it finish.
      ...workerConfigInput(
        { ...flags, workerId: flags.stackId ?? (env.BENCHFLEET_STACK_ID || undefined) },
        env,
        { workerId: `stack-${hostname()}`, graceS: 3 * 3600 },
      ),
      artifactsUri: env.BENCHFLEET_ARTIFACTS || undefined,
      bytebotUrl: flags.bytebotUrl ?? env.BYTEBOT_URL,
      desktopUrl: flags.desktopUrl ?? (env.BYTEBOT_DESKTOP_URL || undefined),
      events: flags.events ?? true,
    },
    {
      ...WORKER_CONFIG_LABELS,
      workerId: '--stack-id (or BENCHFLEET_STACK_ID)',
      bytebotUrl: '--bytebot-url (or BYTEBOT_URL)',
      desktopUrl: '--desktop-url (or BYTEBOT_DESKTOP_URL)',
    },
  );
  return { ...parsed, artifactSettings: s3 ? { s3 } : {} };
}
