import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createArtifactStore, readArtifact } from './artifact-store.js';

describe('FileArtifactStore', () => {
  it('stores bytes under sanitised segments and reads them back by URI', async () => {
    const root = mkdtempSync(join(tmpdir(), 'artifacts-'));
    const sut = createArtifactStore(`file://${root}`);
    const uri = await sut.put(['run:1', '../../etc', 'step_001.png'], Buffer.from('png'));
    expect(uri.startsWith(`file://${root}/`)).toBe(true);
    expect(uri).not.toContain('..');
    expect(uri).toContain('run_1');
    expect((await sut.get(uri)).toString()).toBe('png');
    expect((await readArtifact(uri)).toString()).toBe('png');
  });

  it('refuses schemes it cannot write to, naming the variable', () => {
    expect(() => createArtifactStore('ftp://host/x')).toThrow(
      /BENCHFLEET_ARTIFACTS=ftp:\/\/host\/x: expected a directory, a file:\/\/ URI or an s3:/,
    );
  });
});
