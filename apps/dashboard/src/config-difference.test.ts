import { describe, expect, it } from 'vitest';
import { configDifference as sut } from './config-difference.js';

describe('configDifference', () => {
  it('names every key added, removed or changed, into nested objects, sorted by path', () => {
    const a = {
      config: { max_steps: 15, split: 'test', llm: { model: 'a', temperature: 0 }, goals: [1, 2] },
      model: null,
      agent: { kind: 'rule' },
    };
    const b = {
      config: { max_steps: 30, llm: { model: 'a', temperature: 0.7, top_p: 1 }, goals: [1, 3] },
      model: { name: 'm' },
      agent: { kind: 'llm' },
    };
    expect(sut(a, b)).toEqual([
      { path: 'agent.kind', change: 'changed', a: '"rule"', b: '"llm"' },
      { path: 'config.goals', change: 'changed', a: '[1,2]', b: '[1,3]' },
      { path: 'config.llm.temperature', change: 'changed', a: '0', b: '0.7' },
      { path: 'config.llm.top_p', change: 'added', b: '1' },
      { path: 'config.max_steps', change: 'changed', a: '15', b: '30' },
      { path: 'config.split', change: 'removed', a: '"test"' },
      { path: 'model', change: 'changed', a: 'null', b: '{"name":"m"}' },
    ]);
  });

  it('finds nothing between equal configurations, whatever their key order', () => {
    expect(sut({ x: { b: 1, a: [1, { c: 2 }] } }, { x: { a: [1, { c: 2 }], b: 1 } })).toEqual([]);
  });
});
