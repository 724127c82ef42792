// CPython's `random.Random` (MT19937) with the exact draws of CPython 3.11, so that WebShop's goal
// order (`random.seed(233); random.shuffle(goals)`) and price draws can be reproduced bit for bit.

const STATE_SIZE = 624;
const SHIFT_SIZE = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

export type PythonSeed = number | bigint;

function seedKey(seed: PythonSeed): number[] {
  let n: bigint;
  if (typeof seed === 'bigint') {
    n = seed;
  } else {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(
        `PythonRandom seeds must be integers (got ${seed}); float and string seeds are not supported`,
      );
    }
    n = BigInt(seed);
  }
  if (n < 0n) n = -n;
  const key: number[] = [];
  while (n > 0n) {
    key.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return key.length === 0 ? [0] : key;
}

function bitLength(n: number): number {
  if (n <= 0xffffffff) return 32 - Math.clz32(n);
  return BigInt(n).toString(2).length;
}

export class PythonRandom {
  private readonly state = new Uint32Array(STATE_SIZE);
  private index = STATE_SIZE + 1;

  constructor(seed: PythonSeed) {
    this.seed(seed);
  }

  /** `random.seed(n)` for an int `n`: `init_by_array` over the 32-bit words of `abs(n)`. */
  seed(seed: PythonSeed): void {
    const key = seedKey(seed);
    const mt = this.state;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(STATE_SIZE, key.length); k > 0; k -= 1) {
      const previous = mt[i - 1] ?? 0;
      const mixed = Math.imul((previous ^ (previous >>> 30)) >>> 0, 1664525) >>> 0;
      mt[i] = (((mt[i] ?? 0) ^ mixed) >>> 0) + (key[j] ?? 0) + j;
      i += 1;
      j += 1;
      if (i >= STATE_SIZE) {
        mt[0] = mt[STATE_SIZE - 1] ?? 0;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = STATE_SIZE - 1; k > 0; k -= 1) {
      const previous = mt[i - 1] ?? 0;
      const mixed = Math.imul((previous ^ (previous >>> 30)) >>> 0, 1566083941) >>> 0;
      mt[i] = (((mt[i] ?? 0) ^ mixed) >>> 0) - i;
      i += 1;
      if (i >= STATE_SIZE) {
        mt[0] = mt[STATE_SIZE - 1] ?? 0;
        i = 1;
      }
    }
    mt[0] = UPPER_MASK;
    this.index = STATE_SIZE;
  }

  private initGenrand(s: number): void {
    const mt = this.state;
    mt[0] = s >>> 0;
    for (let i = 1; i < STATE_SIZE; i += 1) {
      const previous = mt[i - 1] ?? 0;
      mt[i] = Math.imul(1812433253, (previous ^ (previous >>> 30)) >>> 0) + i;
    }
    this.index = STATE_SIZE;
  }

  private twist(): void {
    const mt = this.state;
    for (let k = 0; k < STATE_SIZE; k += 1) {
      const y = ((mt[k] ?? 0) & UPPER_MASK) | ((mt[(k + 1) % STATE_SIZE] ?? 0) & LOWER_MASK);
      const next = (mt[(k + SHIFT_SIZE) % STATE_SIZE] ?? 0) ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      mt[k] = next >>> 0;
    }
    this.index = 0;
  }

  /** One raw 32-bit MT19937 output (`genrand_uint32`). */
  nextUint32(): number {
    if (this.index >= STATE_SIZE) this.twist();
    let y = this.state[this.index] ?? 0;
    this.index += 1;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: a float in [0, 1) with 53 random bits. */
  random(): number {
    const high = this.nextUint32() >>> 5;
    const low = this.nextUint32() >>> 6;
    return (high * 67108864.0 + low) * (1.0 / 9007199254740992.0);
  }

  /** `random.getrandbits(k)`. */
  getrandbits(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError('number of bits must be non-negative');
    if (k <= 32) return BigInt(this.nextBits32(k));
    let result = 0n;
    let shift = 0n;
    for (let remaining = k; remaining > 0; remaining -= 32) {
      result |= BigInt(this.nextBits32(Math.min(remaining, 32))) << shift;
      shift += 32n;
    }
    return result;
  }

  private nextBits32(k: number): number {
    if (k === 0) return 0;
    return this.nextUint32() >>> (32 - k);
  }

  /** `random._randbelow(n)` (the getrandbits variant): uniform in [0, n), by rejection. */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new RangeError(`randbelow needs a positive integer (got ${n})`);
    const k = bitLength(n);
    if (k <= 32) {
      let r = this.nextBits32(k);
      while (r >= n) r = this.nextBits32(k);
      return r;
    }
    const limit = BigInt(n);
    let r = this.getrandbits(k);
    while (r >= limit) r = this.getrandbits(k);
    return Number(r);
  }

  /** `random.shuffle(x)`: shuffles in place, like CPython. */
  shuffle<T>(items: T[]): void {
    for (let i = items.length - 1; i > 0; i -= 1) {
      const j = this.randbelow(i + 1);
      const swap = items[i] as T;
      items[i] = items[j] as T;
      items[j] = swap;
    }
  }

  /** `random.sample(population, k)`. */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (!Number.isInteger(k) || k < 0 || k > n)
      throw new RangeError('Sample larger than population or is negative');
    const result: T[] = [];
    let setSize = 21;
    if (k > 5) setSize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setSize) {
      const pool = population.slice();
      for (let i = 0; i < k; i += 1) {
        const j = this.randbelow(n - i);
        result.push(pool[j] as T);
        pool[j] = pool[n - i - 1] as T;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i += 1) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result.push(population[j] as T);
      }
    }
    return result;
  }

  /** `random.uniform(a, b)`. */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }

  /** `random.choice(seq)`. */
  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Cannot choose from an empty sequence');
    return items[this.randbelow(items.length)] as T;
  }
}
