// Token text → term id cache for indexing, looked up straight from the document's characters so
// that tokens already seen cost no substring allocation and no string hashing by the engine.

const EMPTY = -1;
/** Returned by `find` when the token is not cached. */
export const UNCACHED = -2;

export class TokenTermCache {
  private slots: Int32Array;
  private hashes: Int32Array;
  private keys: string[];
  private mask: number;
  private used = 0;
  /** Hash of the token given to the last `find`, reused by `add`. */
  private lastHash = 0;

  /** `limit` bounds the entries kept: the cache is emptied when it is reached. */
  constructor(private readonly limit: number) {
    const capacity = 1 << 12;
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.hashes = new Int32Array(capacity);
    this.keys = new Array<string>(capacity).fill('');
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.used;
  }

  /** The cached value (term id, or -1 for a dropped token) of text[start, end), or UNCACHED. */
  find(text: string, start: number, end: number): number {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    this.lastHash = hash;
    const length = end - start;
    let slot = hash & this.mask;
    while (true) {
      const value = this.slots[slot] as number;
      if (value === EMPTY) return UNCACHED;
      if (this.hashes[slot] === hash) {
        const key = this.keys[slot] as string;
        if (key.length === length) {
          let same = true;
          for (let i = 0; i < length; i++) {
            if (key.charCodeAt(i) !== text.charCodeAt(start + i)) {
              same = false;
              break;
            }
          }
          if (same) return value - 1;
        }
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Caches `token` (the text given to the last `find`, which returned UNCACHED). */
  add(token: string, value: number): void {
    if (this.used >= this.limit) this.clear();
    if ((this.used + 1) * 2 > this.slots.length) this.grow();
    this.insert(this.lastHash, token, value + 1);
    this.used++;
  }

  private insert(hash: number, key: string, stored: number): void {
    let slot = hash & this.mask;
    while (this.slots[slot] !== EMPTY) slot = (slot + 1) & this.mask;
    this.slots[slot] = stored;
    this.hashes[slot] = hash;
    this.keys[slot] = key;
  }

  private grow(): void {
    const { slots, hashes, keys } = this;
    const capacity = slots.length * 2;
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.hashes = new Int32Array(capacity);
    this.keys = new Array<string>(capacity).fill('');
    this.mask = capacity - 1;
    for (let slot = 0; slot < slots.length; slot++) {
      const stored = slots[slot] as number;
      if (stored !== EMPTY) this.insert(hashes[slot] as number, keys[slot] as string, stored);
    }
  }

  clear(): void {
    this.slots.fill(EMPTY);
    this.keys.fill('');
    this.used = 0;
  }
}
