import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, configDigest as sut } from './config-digest.js';

describe('configDigest', () => {
  it('is the sha256 of the JSON with sorted keys and no spaces', () => {
    const config = { split: 'test', catalog_id: 'demo', nested: { z: [1, 2.5, 'x'], a: null } };
    const canonical = '{"catalog_id":"demo","nested":{"a":null,"z":[1,2.5,"x"]},"split":"test"}';
    expect(canonicalJson(config)).toBe(canonical);
    expect(sut(config)).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('does not depend on key order, and changes with any value', () => {
    expect(sut({ a: 1, b: { c: 2, d: 3 } })).toBe(sut({ b: { d: 3, c: 2 }, a: 1 }));
    expect(sut({ a: 1, b: { c: 2, d: 3 } })).not.toBe(sut({ a: 1, b: { c: 2, d: 4 } }));
    expect(canonicalJson({ é: 1, b: 'x"y' })).toBe('{"b":"x\\"y","é":1}');
  });
});
