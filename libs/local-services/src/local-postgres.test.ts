import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalPostgres, npmPostgresBinDir } from './local-postgres.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function count(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('select count(*) from kept')).rows[0].count);
  } finally {
    await client.end();
  }
}

describe('LocalPostgres', () => {
  it('restarts on the same port with the same data, and its clients see the restart', async () => {
    const sut = await LocalPostgres.create();
    cleanups.push(() => sut.destroy());
    const client = new pg.Client({ connectionString: sut.url });
    const errors: string[] = [];
    client.on('error', (error: Error & { code?: string }) =>
      errors.push(error.code ?? error.message),
    );
    await client.connect();
    await client.query('create table kept (n int); insert into kept values (1), (2)');
    await sut.restart();
    expect(errors).toContain('57P01');
    expect(await count(sut.url)).toBe(2);
    await sut.stop();
    expect(sut.running).toBe(false);
    await expect(count(sut.url)).rejects.toThrow(/ECONNREFUSED/);
    await sut.start();
    expect(await count(sut.url)).toBe(2);
  });

  // A clone under /root (or any 0700 parent) as root: Postgres, which never runs as root, cannot
  // reach binaries there; once this died with an unhandled 'error' event (spawn EACCES).
  it('starts from binaries under a directory only their owner can enter', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'private-clone-'));
    cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
    const native = dirname(npmPostgresBinDir());
    cpSync(native, join(parent, 'native'), { recursive: true, verbatimSymlinks: true });
    chmodSync(parent, 0o700);
    const sut = await LocalPostgres.create({ binDir: join(parent, 'native', 'bin') });
    cleanups.push(() => sut.destroy());
    const client = new pg.Client({ connectionString: sut.url });
    await client.connect();
    expect((await client.query('select 1 as one')).rows[0]).toEqual({ one: 1 });
    await client.end();
  });
});
