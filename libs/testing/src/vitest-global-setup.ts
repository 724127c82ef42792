import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import {
  provisionServices,
  ServicesUnavailableError,
  type ProvisionedServices,
} from '@benchfleet/local-services';
import {
  chromiumPrerequisite,
  ensureDebianPrerequisite,
  MissingPrerequisiteError,
} from './debian-prerequisite.js';
import { createTemplateDatabase } from './test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    redisUrl: string;
  }
}

let services: ProvisionedServices | undefined;
let template: { drop(): Promise<void> } | undefined;

/**
 * A missing piece stops the run with its one line; thrown, vitest would bury it under "No test
 * files found" and a stack trace.
 */
function stopOnMissingPiece(error: unknown): never {
  if (error instanceof MissingPrerequisiteError || error instanceof ServicesUnavailableError) {
    console.error(`benchfleet tests: ${error.message}`);
    process.exit(1);
  }
  throw error;
}

export async function setup(project: TestProject): Promise<void> {
  // First, so a machine that cannot run every test stops at once with one line saying why.
  await ensureDebianPrerequisite(chromiumPrerequisite(), {
    log: (line) => console.error(line),
  }).catch(stopOnMissingPiece);
  // The CLIs tests start are the compiled ones users get, rebuilt first if a source changed since.
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../../../build-bins.mjs', import.meta.url)), '--if-stale'],
    { stdio: 'inherit' },
  );
  services = await provisionServices({
    preferTestVariables: true,
    log: (line) => console.error(line),
  }).catch(stopOnMissingPiece);
  const created = await createTemplateDatabase(services.databaseUrl);
  template = created;
  project.provide('adminDatabaseUrl', services.databaseUrl);
  project.provide('templateDatabase', created.name);
  project.provide('redisUrl', services.redisUrl);
}

export async function teardown(): Promise<void> {
  await template?.drop().catch(() => undefined);
  await services?.stop();
}
