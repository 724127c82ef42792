import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArtifactStoreError, createArtifactStore, readArtifact } from './artifact-store.js';

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

describe('FileArtifactStore on a full disk', () => {
  // Once: 7 of 8 OSWorld tasks ended error/infra after 4 attempts each on a full disk, and the
  // worker never paused. A tmpfs of 256 KiB, filled (the tests run as root, here and in CI).
  it('names the store and ENOSPC on a put and in its health check, and passes again with room', async () => {
    const mount = mkdtempSync(join(tmpdir(), 'artifacts-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mount]);
    try {
      const sut = createArtifactStore(`file://${mount}`);
      expect(await sut.healthProblem('w1')).toBeNull();
      try {
        writeFileSync(join(mount, 'filler'), Buffer.alloc(512 * 1024));
      } catch {
        // Full now, as meant.
      }
      const error = await sut
        .put(['run', 'step_001.png'], Buffer.alloc(4096))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArtifactStoreError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^the artifact store file://${mount}/? is full \\(ENOSPC: no space left on device`,
        ),
      );
      expect(await sut.healthProblem('w1')).toMatch(/^the artifact store file:.* is full \(ENOSPC/);
      rmSync(join(mount, 'filler'));
      expect(await sut.healthProblem('w1')).toBeNull();
    } finally {
      execFileSync('umount', ['-l', mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
