import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  parseEvaluateFixtureFile,
  runEvaluateFixtureCase,
} from '../fixtures/evaluate-fixture-file.js';
import { evaluateOsworld, lastActionIsFail, type EvaluateHooks } from './osworld-evaluate.js';
import { pyFloat, pyStr } from '../python/values.js';
import { PythonException } from '../python/exceptions.js';

const evaluateFixtures = fileURLToPath(
  new URL('../../../../../shared/osworld/grading/metric-fixtures/_evaluate.json', import.meta.url),
);

describe('evaluate() golden cases made by OSWorld’s DesktopEnv.evaluate', async () => {
  const file = parseEvaluateFixtureFile(await readFile(evaluateFixtures, 'utf8'));

  it('has the 34 shared cases, and the runner fails a case whose score or call order differs', async () => {
    expect(file.cases).toHaveLength(34);
    const mean = file.cases.find((fixtureCase) => fixtureCase.id === 'and_partial_mean');
    if (!mean) throw new Error('case and_partial_mean is missing');
    expect((await runEvaluateFixtureCase({ ...mean, score: 0.5 })).passed).toBe(false);
    expect(
      (await runEvaluateFixtureCase({ ...mean, call_log: [...mean.call_log].reverse() })).passed,
    ).toBe(false);
  });

  for (const fixtureCase of file.cases) {
    it(`${fixtureCase.id}: ${fixtureCase.description}`, async () => {
      const verdict = await runEvaluateFixtureCase(fixtureCase);
      expect(verdict).toEqual({ passed: true });
    });
  }
});

describe('evaluateOsworld beyond the golden cases', () => {
  const hooks = (overrides: Partial<EvaluateHooks> = {}): EvaluateHooks => ({
    runPostconfig: async () => undefined,
    hasGetter: (type) => type === 'rule' || type === 'vm_file',
    runGetter: async (_type, config) => (config as { value?: unknown }).value ?? null,
    findMetric: (name) => (name === 'm' ? () => pyFloat(1) : undefined),
    metricContext: { cacheDir: '/cache' },
    ...overrides,
  });

  it('an unknown metric fails while parsing, before postconfig runs (AttributeError)', async () => {
    let postconfigRan = false;
    const run = evaluateOsworld(
      { func: 'nope', result: { type: 'rule' }, postconfig: [] },
      [],
      hooks({ runPostconfig: async () => void (postconfigRan = true) }),
    );
    await expect(run).rejects.toMatchObject({ type: 'AttributeError' });
    expect(postconfigRan).toBe(false);
  });

  it('a dict options with a list func of as many keys passes the assertion, then fails on options[0] (KeyError)', async () => {
    const run = evaluateOsworld(
      { func: ['m', 'm'], result: [{ type: 'rule' }, { type: 'rule' }], options: { a: 1, b: 2 } },
      [],
      hooks(),
    );
    await expect(run).rejects.toEqual(new PythonException('KeyError', '0'));
  });

  it('or: a FileNotFoundError on the first getter leaves result_state unbound (UnboundLocalError)', async () => {
    const run = evaluateOsworld(
      { func: ['m', 'm'], conj: 'or', result: [{ type: 'vm_file' }, { type: 'vm_file' }] },
      [],
      hooks({
        runGetter: async () => {
          throw new PythonException('FileNotFoundError', 'x');
        },
      }),
    );
    await expect(run).rejects.toMatchObject({ type: 'UnboundLocalError' });
  });

  it("float() of a str score is Python's: '1_0' is 10.0, so under or it is kept and max() returns it", async () => {
    const score = await evaluateOsworld(
      { func: ['s'], conj: 'or', result: [{ type: 'rule' }] },
      [],
      hooks({ findMetric: (name) => (name === 's' ? () => pyStr('1_0') : undefined) }),
    );
    expect(score).toEqual(pyStr('1_0'));
  });

  it("an evaluator or a getter config that is a list fails with Python's TypeError for list['…']", async () => {
    const listIndices = new PythonException(
      'TypeError',
      'list indices must be integers or slices, not str',
    );
    await expect(evaluateOsworld({ func: ['m'], result: [['rule']] }, [], hooks())).rejects.toEqual(
      listIndices,
    );
    await expect(evaluateOsworld([{ func: 'm' }], [], hooks())).rejects.toEqual(listIndices);
    await expect(evaluateOsworld(null, [], hooks())).rejects.toEqual(
      new PythonException('TypeError', "'NoneType' object is not subscriptable"),
    );
  });

  it('FAIL counts only as the last action, as a string or an action dict', () => {
    expect(lastActionIsFail(['FAIL'])).toBe(true);
    expect(lastActionIsFail([{ action_type: 'FAIL' }])).toBe(true);
    expect(lastActionIsFail(['FAIL', 'DONE'])).toBe(false);
    expect(lastActionIsFail([])).toBe(false);
  });

  it('errors that are not Python exceptions (infra) pass through unchanged', async () => {
    const infra = new Error('desktop gone');
    const run = evaluateOsworld(
      { func: 'm', result: { type: 'vm_file' } },
      [],
      hooks({
        runGetter: async () => {
          throw infra;
        },
      }),
    );
    await expect(run).rejects.toBe(infra);
  });
});
