// Small seeded PRNG (sfc32 seeded through the murmur3 finaliser). Every product draws from its own
// stream keyed by (seed, product index), so any product can be generated without the ones before.

/** murmur3's 32-bit finaliser: a bijection on uint32 with good avalanche. */
export function mix32(value: number): number {
  let x = value >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

export class DemoRandom {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;

  constructor(seed: number, stream: number) {
    this.a = mix32(seed ^ 0x9e3779b9);
    this.b = mix32(stream ^ 0x7f4a7c15);
    this.c = mix32(Math.imul(seed, 0x2545f491) ^ mix32(stream));
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('cannot pick from an empty list');
    return item;
  }

  /** `count` distinct items in random order (all of them when count >= length). */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const n = Math.min(count, pool.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (pool.length - i));
      const chosen = pool[j] as T;
      pool[j] = pool[i] as T;
      pool[i] = chosen;
    }
    return pool.slice(0, n);
  }
}
