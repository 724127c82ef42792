import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeS3, type FakeS3 } from '@benchfleet/testing';
import {
  createArtifactStore,
  readArtifact,
  s3SettingsFromEnv,
  type S3Settings,
} from './artifact-store.js';

let s3: FakeS3;
let settings: S3Settings;

beforeAll(async () => {
  s3 = await startFakeS3({ accessKeyId: 'AKIDTEST' });
  settings = {
    endpoint: s3.url,
    region: 'eu-west-1',
    accessKeyId: 'AKIDTEST',
    secretAccessKey: 'secret',
  };
});

afterAll(async () => {
  await s3.close();
});

describe('S3ArtifactStore', () => {
  it('puts signed objects under the prefix with sanitised keys and reads them back', async () => {
    const sut = createArtifactStore('s3://shots/runs/', { s3: settings });
    const uri = await sut.put(['run:1', '../etc', 'step_001.png'], Buffer.from('png-bytes'));
    expect(uri).toBe('s3://shots/runs/run_1/__etc/step_001.png');
    expect(s3.objects.get('shots/runs/run_1/__etc/step_001.png')).toEqual({
      body: Buffer.from('png-bytes'),
      contentType: 'image/png',
    });
    expect(s3.accessKeys).toEqual(new Set(['AKIDTEST']));
    expect((await sut.get(uri)).toString()).toBe('png-bytes');
    expect((await readArtifact(uri, { s3: settings })).toString()).toBe('png-bytes');
  });

  it('reports refused and missing objects with their URI', async () => {
    const wrongKey = createArtifactStore('s3://shots', {
      s3: { ...settings, accessKeyId: 'AKIDWRONG' },
    });
    await expect(wrongKey.put(['x.png'], Buffer.from('x'))).rejects.toThrow(
      /S3 PUT s3:\/\/shots\/x\.png failed: HTTP 403/,
    );
    await expect(readArtifact('s3://shots/nothing.png', { s3: settings })).rejects.toThrow(
      /S3 GET s3:\/\/shots\/nothing\.png failed: HTTP 404/,
    );
  });

  it('needs credentials, and says which variables give them', () => {
    expect(() => createArtifactStore('s3://shots/runs')).toThrow(
      /set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
    expect(s3SettingsFromEnv({})).toBeUndefined();
    expect(
      s3SettingsFromEnv({
        AWS_ACCESS_KEY_ID: 'a',
        AWS_SECRET_ACCESS_KEY: 'b',
        AWS_REGION: 'eu-central-1',
      }),
    ).toEqual({
      accessKeyId: 'a',
      secretAccessKey: 'b',
      region: 'eu-central-1',
      endpoint: 'https://s3.eu-central-1.amazonaws.com',
    });
  });
});

describe('S3ArtifactStore when the service fails', () => {
  // Once: every failed PUT used up an attempt and a Bytebot task; the worker never paused.
  it('names the store and the cause of a 5xx or of no answer, on a put and in its health check', async () => {
    const sut = createArtifactStore('s3://shots/runs', { s3: settings });
    expect(await sut.healthProblem('w1')).toBeNull();
    s3.failing = 503;
    try {
      await expect(sut.put(['x.png'], Buffer.from('x'))).rejects.toThrow(
        /^the artifact store s3:\/\/shots\/runs fails \(S3 PUT s3:\/\/shots\/runs\/x\.png failed: HTTP 503\)$/,
      );
      expect(await sut.healthProblem('w1')).toBe(
        'the artifact store s3://shots/runs fails (S3 PUT s3://shots/runs/.health/w1 failed: HTTP 503)',
      );
      s3.failing = 'hang';
      expect(await sut.healthProblem('w1', 500)).toMatch(
        /^the artifact store s3:\/\/shots\/runs does not answer \(S3 PUT s3:\/\/shots\/runs\/\.health\/w1: .*(timeout|aborted)/i,
      );
    } finally {
      s3.failing = null;
    }
    expect(await sut.healthProblem('w1')).toBeNull();
  });
});
