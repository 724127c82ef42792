import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArtifactStore, type S3Settings } from '@benchfleet/artifacts';
import { solidColorPng, startFakeS3, useTestServices, type FakeS3 } from '@benchfleet/testing';
import { startDashboardUnderTest } from '../test-support/dashboard-under-test.js';
import { writeFixtureRun } from '../test-support/run-fixtures.js';
import { ArtifactReader } from './artifact-reader.js';

// Screenshots are read only from inside the fleet's artifact store, a directory or an S3 bucket
// prefix, whatever URI a row holds.

const services = useTestServices();
const PNG = solidColorPng(8, 6, [200, 10, 10]);
let s3: FakeS3;
let settings: S3Settings;
let scratch: string;

beforeAll(async () => {
  s3 = await startFakeS3({ accessKeyId: 'AKIDDASH' });
  settings = {
    endpoint: s3.url,
    region: 'us-east-1',
    accessKeyId: 'AKIDDASH',
    secretAccessKey: 'secret',
  };
  scratch = await mkdtemp(join(tmpdir(), 'screenshot-reader-'));
});

afterAll(async () => {
  await s3.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('ArtifactReader on a directory', () => {
  it('reads images inside the store and nothing else', async () => {
    const root = join(scratch, 'store');
    const sibling = join(scratch, 'store-sibling');
    await mkdir(sibling, { recursive: true });
    await writeFile(join(sibling, 'shot.png'), PNG);
    const store = createArtifactStore(root);
    const sut = new ArtifactReader(store);
    const inside = await store.put(['run', 'task', 'step_001.png'], PNG);
    await writeFile(join(root, 'run', 'task', 'notes.png'), 'not an image');
    await symlink(join(sibling, 'shot.png'), join(root, 'run', 'task', 'out.png'));
    expect((await sut.readImage(inside))?.bytes.equals(PNG)).toBe(true);
    // A sibling directory whose name merely starts like the store's, a climb, a symlink out, a non-image.
    for (const uri of [
      pathToFileURL(join(sibling, 'shot.png')).toString(),
      `${store.baseUri}/run/../../store-sibling/shot.png`,
      `${store.baseUri}/run/task/out.png`,
      `${store.baseUri}/run/task/notes.png`,
      `${store.baseUri}/run/task/missing.png`,
      's3://bucket/run/task/step_001.png',
    ]) {
      expect(await sut.readImage(uri), uri).toBeUndefined();
    }
  });
});

describe('ArtifactReader.readFile', () => {
  it('reads any file inside the store, plain text as text and anything else as bytes, and nothing outside', async () => {
    const root = join(scratch, 'files');
    const store = createArtifactStore(root);
    const sut = new ArtifactReader(store);
    const text = await store.put(['run', 'task', 'end-state', 'notes.txt'], Buffer.from('héllo\n'));
    const binary = await store.put(['run', 'task', 'end-state', 'doc.bin'], Buffer.from([1, 0, 2]));
    const latin1 = await store.put(
      ['run', 'task', 'end-state', 'l1.txt'],
      Buffer.from([0xe9, 0x41]),
    );
    expect(await sut.readFile(text)).toEqual({
      bytes: Buffer.from('héllo\n'),
      contentType: 'text/plain; charset=utf-8',
    });
    expect((await sut.readFile(binary))?.contentType).toBe('application/octet-stream');
    expect((await sut.readFile(latin1))?.contentType).toBe('application/octet-stream');
    await mkdir(join(scratch, 'outside'), { recursive: true });
    await writeFile(join(scratch, 'outside', 'secret.txt'), 'no');
    for (const uri of [
      pathToFileURL(join(scratch, 'outside', 'secret.txt')).toString(),
      `${store.baseUri}/run/../../outside/secret.txt`,
      `${store.baseUri}/run/task/end-state/missing.txt`,
    ])
      expect(await sut.readFile(uri), uri).toBeUndefined();
  });
});

describe('ArtifactReader on S3', () => {
  it('reads objects under the store prefix and refuses other buckets, prefixes and climbs', async () => {
    const store = createArtifactStore('s3://shots/fleet', { s3: settings });
    const sut = new ArtifactReader(store);
    const inside = await store.put(['run', 'task', 'step_001.png'], PNG);
    await createArtifactStore('s3://shots/other', { s3: settings }).put(['x.png'], PNG);
    await createArtifactStore('s3://elsewhere/fleet', { s3: settings }).put(['x.png'], PNG);
    expect((await sut.readImage(inside))?.contentType).toBe('image/png');
    for (const uri of [
      's3://shots/other/x.png',
      's3://elsewhere/fleet/x.png',
      's3://shots/fleet/../other/x.png',
      's3://shots/fleetish/x.png',
      'file:///etc/passwd',
    ]) {
      expect(await sut.readImage(uri), uri).toBeUndefined();
    }
  });

  it('is what the dashboard serves a step screenshot from', async () => {
    const artifacts = createArtifactStore('s3://shots/dashboard', { s3: settings });
    const sut = await startDashboardUnderTest(services, { artifacts });
    try {
      await writeFixtureRun(services.db, artifacts, {
        id: 'run-s3',
        name: 's3-screenshots',
        benchmark: 'osworld',
        tasks: [
          {
            taskId: 'task',
            domain: 'd',
            instruction: 'i',
            attempts: [
              {
                steps: [{ action: { tool_calls: [] }, screenshot: PNG }],
                outcome: { status: 'success', durationMs: 1 },
              },
            ],
          },
        ],
      });
      const step = await services.db
        .selectFrom('steps')
        .select('screenshot_uri')
        .where('run_id', '=', 'run-s3')
        .executeTakeFirstOrThrow();
      expect(step.screenshot_uri).toBe('s3://shots/dashboard/run-s3/task/attempt-1/step_001.png');
      const response = await fetch(
        `${sut.dashboard.url}/api/runs/run-s3/tasks/task/attempts/1/steps/1/screenshot`,
      );
      expect(response.status).toBe(200);
      expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).toBe(true);
    } finally {
      await sut.close();
    }
  });
});
