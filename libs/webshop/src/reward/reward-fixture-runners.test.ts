import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runFixtureFile, type FixtureRunner } from './fixture-runner.js';
import { verifyRewardFixtures, webshopRewardFixtureRunners } from './reward-fixture-runners.js';

const fixturePath = (name: string): string =>
  fileURLToPath(new URL(`../../../../../shared/webshop/fixtures/${name}`, import.meta.url));

describe('verifyRewardFixtures', () => {
  it.each([
    ['reward_units.json', 2936, 'webshop reward units'],
    ['python_random_seed233.json', 5, 'CPython random'],
    ['token_set_ratio_backend_diffs.json', 403, 'webshop token_set_ratio backend diffs'],
    ['env_episodes.json', 16, 'webshop episode goals and rewards'],
  ])('passes every case of %s', async (name, expectedPassed, runner) => {
    const sut = await verifyRewardFixtures(fixturePath(name));
    expect(sut.failed).toEqual([]);
    expect(sut.passed).toBe(expectedPassed);
    expect(sut.runners).toEqual([runner]);
  });

  it('dispatches on structure, not file name, and reports wrong values', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webshop-fixtures-'));
    const renamed = join(dir, 'hidden.json');
    writeFileSync(
      renamed,
      JSON.stringify({
        normalize_color: [
          { input: 'dark grey', output: 'dark' },
          { input: 'washed', output: 'washed' },
        ],
      }),
    );
    const sut = await verifyRewardFixtures(renamed);
    expect(sut.passed).toBe(1);
    expect(sut.failed).toEqual([
      { case: 'normalize_color/1 "washed"', message: 'expected "washed", got "ash"' },
    ]);
  });

  it('fails files that no runner recognises or that are not JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webshop-fixtures-'));
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, '{"something": []}');
    expect((await verifyRewardFixtures(unknown)).failed[0]?.message).toMatch(
      /no fixture runner recognises/,
    );
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"pairs": [');
    expect((await verifyRewardFixtures(broken)).failed[0]?.message).toMatch(/cannot read fixture/);
  });

  it('accepts more runners, running every one that matches', async () => {
    const stepsRunner: FixtureRunner = {
      name: 'episode steps',
      matches: (json) => typeof json === 'object' && json !== null && 'human' in json,
      run: () => [{ case: 'steps', passed: true }],
    };
    const sut = await runFixtureFile(fixturePath('env_episodes.json'), [
      ...webshopRewardFixtureRunners,
      stepsRunner,
    ]);
    expect(sut.runners).toEqual(['webshop episode goals and rewards', 'episode steps']);
    expect(sut.passed).toBe(17);
  });
});
