import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PythonRandom } from './python-random.js';

const seedFixtureUrl = new URL(
  '../../../../../shared/webshop/fixtures/python_random_seed233.json',
  import.meta.url,
);

type SeedFixture = {
  seed: number;
  shuffle_permutations: Record<string, number[]>;
  first_random_random_after_seed_233: number[];
  first_getrandbits32_after_seed_233: number[];
};

const fixture = JSON.parse(readFileSync(seedFixtureUrl, 'utf8')) as SeedFixture;

describe('PythonRandom', () => {
  it('gives CPython random() after seed(233)', () => {
    const sut = new PythonRandom(fixture.seed);
    const draws = fixture.first_random_random_after_seed_233.map(() => sut.random());
    expect(draws).toEqual(fixture.first_random_random_after_seed_233);
  });

  it('gives CPython getrandbits(32) after seed(233)', () => {
    const sut = new PythonRandom(fixture.seed);
    const draws = fixture.first_getrandbits32_after_seed_233.map(() => Number(sut.getrandbits(32)));
    expect(draws).toEqual(fixture.first_getrandbits32_after_seed_233);
  });

  it.each(Object.entries(fixture.shuffle_permutations))(
    'shuffles %s items like CPython',
    (size, expected) => {
      const sut = new PythonRandom(fixture.seed);
      const items = Array.from({ length: Number(size) }, (_, index) => index);
      sut.shuffle(items);
      expect(items).toEqual(expected);
    },
  );

  // Reference values printed by CPython 3.11.
  it('matches CPython for seed 0, big seeds, sample, uniform and choice', () => {
    expect(Number(new PythonRandom(0).getrandbits(32))).toBe(3626764237);
    expect(new PythonRandom(0).random()).toBe(0.8444218515250481);
    expect(new PythonRandom(-233).random()).toBe(new PythonRandom(233).random());
    expect(new PythonRandom(2n ** 40n + 5n).random()).toBe(0.5043802970418443);
    expect(new PythonRandom(42).getrandbits(70)).toBe(20500439928067422621n);
    expect(new PythonRandom(99).randbelow(2 ** 40 + 7)).toBe(834958728041);
    expect(new PythonRandom(42).sample([10, 20, 30, 40], 2)).toEqual([10, 40]);
    expect(
      new PythonRandom(42).sample(
        Array.from({ length: 100 }, (_, i) => i),
        5,
      ),
    ).toEqual([81, 14, 3, 94, 35]);
    expect(
      new PythonRandom(5).sample(
        Array.from({ length: 1000 }, (_, i) => i),
        10,
      ),
    ).toEqual([637, 261, 759, 367, 814, 707, 965, 861, 757, 667]);
    expect(
      new PythonRandom(5).sample(
        Array.from({ length: 49 }, (_, i) => i),
        10,
      ),
    ).toEqual([39, 16, 22, 44, 41, 33, 1, 29, 15, 3]);
    expect(new PythonRandom(1234).uniform(12.99, 15.49)).toBe(15.406133839230346);
    expect(new PythonRandom(7).choice(['a', 'b', 'c', 'd', 'e'])).toBe('c');
  });
});
