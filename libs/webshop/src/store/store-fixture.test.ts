import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStoreFixture } from './store-fixture.js';

const fixturesDir = fileURLToPath(
  new URL('../../../../../shared/webshop/fixtures/', import.meta.url),
);

function load(name: string): { json: unknown; context: { filePath: string; fixtureDir: string } } {
  const filePath = `${fixturesDir}${name}`;
  return {
    json: JSON.parse(readFileSync(filePath, 'utf8')) as unknown,
    context: { filePath, fixtureDir: dirname(filePath) },
  };
}

describe('runStoreFixture', () => {
  it('replays every env_episodes.json episode step for step', async () => {
    const { json, context } = load('env_episodes.json');
    const results = await runStoreFixture(json, context);
    expect(results.filter((result) => !result.passed)).toEqual([]);
    // 7 episodes: a reset case, an instruction_text case and one case per further step (70 steps in all).
    expect(results).toHaveLength(77);
  });

  it('reproduces the text observation of every real page in html_mocks/', async () => {
    const { json, context } = load('html_mock_text_observations.json');
    const results = await runStoreFixture(json, context);
    expect(results.filter((result) => !result.passed)).toEqual([]);
    expect(results).toHaveLength(4);
  });

  it('reports a step whose recorded observation differs', async () => {
    const { json, context } = load('env_episodes.json');
    const fixture = json as { human: { episodes: { steps: { observation: string }[] }[] } };
    const step = fixture.human.episodes[2]?.steps[3];
    if (step === undefined) throw new Error('fixture shape changed');
    step.observation += ' tampered';
    const failed = (await runStoreFixture(json, context)).filter((result) => !result.passed);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.case).toContain('E2_navigation_invalid_actions_search_anywhere/step 3');
  });

  it('recognises files by structure and ignores others', async () => {
    const { context } = load('env_episodes.json');
    expect(await runStoreFixture({ token_set_ratio_pairs: [] }, context)).toEqual([]);
  });
});
