import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDockerEngine } from '@benchfleet/testing';
import {
  containerImages,
  containerServicesVerdict,
  REAPER_CONTAINER_IMAGE,
} from './container-services.js';
import { provisionServices } from './service-provisioning.js';

const bareEnv = { PATH: process.env.PATH, HOME: process.env.HOME } as NodeJS.ProcessEnv;

describe('containerServicesVerdict', () => {
  it('refuses containers when no engine answers where DOCKER_HOST points, saying where', async () => {
    const verdict = await containerServicesVerdict({
      ...bareEnv,
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    });
    expect(verdict).toEqual({
      usable: false,
      reason: expect.stringMatching(
        /^no Docker engine answers at unix:\/\/\/nonexistent\/docker\.sock \(.*ENOENT/,
      ) as unknown,
    });
  });

  it('with an engine: an image it has counts; one it neither has nor can pull refuses containers, named', async (ctx) => {
    const engine = await ensureDockerEngine();
    if (!engine.available) return ctx.skip(engine.reason);
    // ensureDockerEngine makes the local bases, so this one is on the machine.
    expect(await containerServicesVerdict(bareEnv, { images: ['debian:bookworm-slim'] })).toEqual({
      usable: true,
    });
    const absent = 'benchfleet-containers-absent:never';
    const verdict = await containerServicesVerdict(bareEnv, {
      images: ['debian:bookworm-slim', absent],
    });
    expect(verdict.usable).toBe(false);
    if (!verdict.usable)
      expect(verdict.reason).toMatch(
        /^benchfleet-containers-absent:never is not here and cannot be pulled \(/,
      );
  });

  it('checks the reaper image the installed testcontainers starts, unless the reaper is off', () => {
    const require = createRequire(import.meta.url);
    const reaper = readFileSync(
      join(dirname(require.resolve('testcontainers')), 'reaper', 'reaper.js'),
      'utf8',
    );
    expect(reaper).toContain(`"${REAPER_CONTAINER_IMAGE}"`);
    expect(containerImages(bareEnv)).toEqual([
      'postgres:16-alpine',
      'redis:7-alpine',
      REAPER_CONTAINER_IMAGE,
    ]);
    expect(containerImages({ ...bareEnv, TESTCONTAINERS_RYUK_DISABLED: 'true' })).toHaveLength(2);
  });
});

describe('provisionServices with a Docker engine that lacks an image', () => {
  it('uses local services and says why containers were not used', async (ctx) => {
    const engine = await ensureDockerEngine();
    if (!engine.available) return ctx.skip(engine.reason);
    // A reaper image no registry has: the engine answers, and at least that image cannot be had.
    const env = { ...bareEnv, RYUK_CONTAINER_IMAGE: 'benchfleet-containers-absent:never' };
    const lines: string[] = [];
    const services = await provisionServices({ env, log: (line) => lines.push(line) });
    try {
      expect(services.source.postgres).toMatch(/^embedded Postgres/);
      expect(services.source.redis).toMatch(/^redis-server/);
      expect(lines[0]).toMatch(
        /^no containers for Postgres and Redis: (postgres:16-alpine|redis:7-alpine|benchfleet-containers-absent:never) is not here and cannot be pulled \(.*\S\)$/,
      );
    } finally {
      await services.stop();
    }
  });
});
