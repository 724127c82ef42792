import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import { afterAll, describe, expect, it } from 'vitest';
import { runSqliteScalar } from './sqlite-query.js';
import { PythonException } from '../python/exceptions.js';

const dir = await mkdtemp(join(tmpdir(), 'sqlite-query-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const SQL = await initSqlJs();
const seed = new SQL.Database();
seed.run(
  "CREATE TABLE t(x, y TEXT, b BLOB); INSERT INTO t VALUES (3, '1_000', x''), (4, 'abc', x'312e35');",
);
const dbPath = join(dir, 'db.sqlite');
await writeFile(dbPath, seed.export());
const junkPath = join(dir, 'junk.sqlite');
await writeFile(junkPath, 'hello');

const outcome = async (path: string | null, sql: string): Promise<number | string> => {
  try {
    return await runSqliteScalar(path, () => sql);
  } catch (error) {
    if (error instanceof PythonException) return error.type;
    throw error;
  }
};

describe('run_sqlite3 over sql.js', () => {
  it("gives float(fetchone()[0] or 0) with Python's conversions", async () => {
    expect(await outcome(dbPath, 'SELECT sum(x) FROM t')).toBe(7);
    expect(await outcome(dbPath, 'SELECT NULL')).toBe(0);
    expect(await outcome(dbPath, 'SELECT y FROM t WHERE x = 3')).toBe(1000);
    expect(await outcome(dbPath, 'SELECT y FROM t WHERE x = 4')).toBe('ValueError');
    expect(await outcome(dbPath, 'SELECT b FROM t WHERE x = 3')).toBe(0);
    expect(await outcome(dbPath, 'SELECT b FROM t WHERE x = 4')).toBe(1.5);
  });

  it("raises what Python's sqlite3 raises", async () => {
    expect(await outcome(dbPath, 'SELECT 1 WHERE 0')).toBe('TypeError');
    expect(await outcome(dbPath, '')).toBe('TypeError');
    expect(await outcome(dbPath, 'SELECT 1; SELECT 2')).toBe('ProgrammingError');
    expect(await outcome(dbPath, 'SELECT 1; -- trailing comment')).toBe(1);
    expect(await outcome(dbPath, 'SELECT * FROM missing')).toBe('OperationalError');
    expect(await outcome(null, 'SELECT 1')).toBe('TypeError');
  });

  it('fails on a file that is no database only when the statement touches it', async () => {
    expect(await outcome(junkPath, 'SELECT 1')).toBe(1);
    expect(await outcome(junkPath, 'SELECT x FROM t')).toBe('DatabaseError');
    expect(await outcome(junkPath, 'PRAGMA user_version')).toBe('DatabaseError');
    expect(await readFile(junkPath, 'utf8')).toBe('hello');
  });

  it('creates a missing database file, as sqlite3.connect does', async () => {
    const created = join(dir, 'new.sqlite');
    expect(await outcome(created, 'SELECT 2')).toBe(2);
    expect((await stat(created)).size).toBe(0);
  });
});
