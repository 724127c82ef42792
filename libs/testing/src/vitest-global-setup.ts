import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { provisionServices, type ProvisionedServices } from '@benchfleet/local-services';
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

export async function setup(project: TestProject): Promise<void> {
  // The CLIs tests start are the compiled ones users get, rebuilt first if a source changed since.
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../../../build-bins.mjs', import.meta.url)), '--if-stale'],
    { stdio: 'inherit' },
  );
  services = await provisionServices({
    preferTestVariables: true,
    log: (line) => console.error(line),
  });
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
