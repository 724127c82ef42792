import { benchmarks } from '@benchfleet/benchmarks';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createArtifactStore, type ArtifactStore } from '@benchfleet/artifacts';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { createLogger } from '@benchfleet/core';
import type { Database } from '@benchfleet/db';
import type { TestServices } from '@benchfleet/testing';
import { startDashboardServer, type DashboardServer } from '../src/dashboard-server.js';
import { ensureWebBuild } from '../src/web-build.js';

export interface DashboardUnderTest {
  dashboard: DashboardServer;
  artifacts: ArtifactStore;
  artifactsDir: string;
  close(): Promise<void>;
}

/** The dashboard in this process over a test file's own database, prefix and artifact directory, on a free port. */
export async function startDashboardUnderTest(
  services: TestServices,
  options: {
    pollMs?: number;
    db?: Database;
    artifacts?: ArtifactStore;
    /** Default: the fleet's benchmarks. */
    registry?: BenchmarkRegistry;
    exportDeadlineMs?: number;
  } = {},
): Promise<DashboardUnderTest> {
  // A fresh build of the current sources (a no-op when dist/web already is one).
  await ensureWebBuild();
  const scratch = await mkdtemp(join(tmpdir(), 'dashboard-test-'));
  const artifactsDir = join(scratch, 'artifacts');
  const artifacts = options.artifacts ?? createArtifactStore(artifactsDir);
  const dashboard = await startDashboardServer({
    registry: options.registry ?? benchmarks,
    db: options.db ?? services.db,
    redisUrl: services.redisUrl,
    prefix: services.prefix,
    artifacts,
    logger: createLogger({ level: 'silent' }),
    pollMs: options.pollMs ?? 200,
    ...(options.exportDeadlineMs !== undefined
      ? { exportDeadlineMs: options.exportDeadlineMs }
      : {}),
    host: '127.0.0.1',
    port: 0,
  });
  return {
    dashboard,
    artifacts,
    artifactsDir,
    async close() {
      await dashboard.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
