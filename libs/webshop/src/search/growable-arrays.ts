// Append-only typed arrays for index building: one flat buffer instead of an object per entry.

export class GrowableInt32Array {
  data: Int32Array;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Int32Array(Math.max(16, initialCapacity));
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = value;
  }

  private grow(): void {
    const next = new Int32Array(Math.ceil(this.data.length * 1.5));
    next.set(this.data);
    this.data = next;
  }

  /** A copy trimmed to the used length. */
  toArray(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

export class GrowableUint8Array {
  data: Uint8Array;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Uint8Array(Math.max(16, initialCapacity));
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = value;
  }

  private grow(): void {
    const next = new Uint8Array(Math.ceil(this.data.length * 1.5));
    next.set(this.data);
    this.data = next;
  }

  toArray(): Uint8Array {
    return this.data.slice(0, this.length);
  }
}
