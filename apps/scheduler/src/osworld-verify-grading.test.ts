import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@benchfleet/testing';

// `scheduler osworld verify-grading --fixtures DIR`, run as a user runs it: CI's check that the
// grading port still gives OSWorld's own answers on the shared golden cases.

const grading = fileURLToPath(new URL('../../../../shared/osworld/grading/', import.meta.url));
const fixtures = join(grading, 'metric-fixtures');
let scratch: string;

// No database or Redis: the command reads files only.
const verify = (dir: string) =>
  runCli('scheduler', ['osworld', 'verify-grading', '--fixtures', dir], process.env, 300_000);

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'verify-grading-cli-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('scheduler osworld verify-grading', () => {
  it('passes every shared golden case: 26 files, 347 metric + 34 evaluate() + 13 getter cases; exit 0', async () => {
    const result = await verify(grading);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('PASS '))).toHaveLength(26);
    expect(lines).toContain('PASS _evaluate.json (evaluate()): 34 passed, 0 failed');
    expect(lines).toContain('PASS check_csv.json (check_csv): 11 passed, 0 failed');
    expect(lines.at(-1)).toBe('394 passed, 0 failed');
  });

  it('an altered expected value fails that case by name: exit 1', async () => {
    const dir = join(scratch, 'failing');
    await mkdir(dir);
    const file = JSON.parse(await readFile(join(fixtures, 'file_contains.json'), 'utf8')) as {
      cases: Array<{ id: string; output: unknown; output_type: string | null }>;
    };
    const altered = file.cases.find((fixtureCase) => typeof fixtureCase.output === 'number');
    if (!altered) throw new Error('file_contains.json has no numeric case');
    altered.output = altered.output === 1 ? 0 : 1;
    await writeFile(join(dir, 'file_contains.json'), JSON.stringify(file));
    await copyFile(join(fixtures, 'exact_match.json'), join(dir, 'exact_match.json'));
    const result = await verify(dir);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toContain('PASS exact_match.json (exact_match): 15 passed, 0 failed');
    expect(lines).toContain('FAIL file_contains.json (file_contains): 10 passed, 1 failed');
    expect(lines.some((line) => line.startsWith(`  FAIL file_contains.json ${altered.id}:`))).toBe(
      true,
    );
    expect(lines.at(-1)).toBe('25 passed, 1 failed');
  });

  it('a malformed file is told apart from a failure: exit 2, the other files still run', async () => {
    const dir = join(scratch, 'malformed');
    await mkdir(dir);
    await writeFile(join(dir, 'check_csv.json'), '{"metric": "check_csv", "cases": [');
    await copyFile(join(fixtures, '_getters.json'), join(dir, '_getters.json'));
    const result = await verify(dir);
    expect(result.code).toBe(2);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('MALFORMED '))).toEqual([
      expect.stringMatching(/^MALFORMED check_csv\.json: not JSON/),
    ]);
    expect(lines).toContain('PASS _getters.json (getters): 13 passed, 0 failed');
    expect(lines.at(-1)).toBe('13 passed, 0 failed');
  });

  it('a missing directory: one line naming it, exit 2', async () => {
    const result = await verify(join(scratch, 'no-such-dir'));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/fixtures directory \S+no-such-dir cannot be read \(.*ENOENT/);
  });
});
