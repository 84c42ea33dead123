/**
 * Row numbers as bits: a million finished rows cost 125 KB, so a resumed run's memory stays flat in the
 * input size (a Set of numbers would cost tens of MB).
 */
/** `bytes`, or a copy of it doubled until `index` fits. */
export function grownTo(bytes: Uint8Array<ArrayBuffer>, index: number): Uint8Array<ArrayBuffer> {
  if (index < bytes.length) return bytes;
  let n = bytes.length;
  while (n <= index) n *= 2;
  const grown = new Uint8Array(n);
  grown.set(bytes);
  return grown;
}

export class RowSet {
  #bits = new Uint8Array(1024);
  #size = 0;

  has(row: number): boolean {
    const i = row >>> 3;
    return i < this.#bits.length && (this.#bits[i] & (1 << (row & 7))) !== 0;
  }

  /** Adds the row; false when it was there already. */
  add(row: number): boolean {
    const i = row >>> 3;
    this.#bits = grownTo(this.#bits, i);
    const mask = 1 << (row & 7);
    if ((this.#bits[i] & mask) !== 0) return false;
    this.#bits[i] |= mask;
    this.#size += 1;
    return true;
  }

  delete(row: number): void {
    if (!this.has(row)) return;
    this.#bits[row >>> 3] &= ~(1 << (row & 7));
    this.#size -= 1;
  }

  get size(): number {
    return this.#size;
  }

  /** The rows, in order. */
  *rows(): Generator<number> {
    const bits = this.#bits;
    for (let i = 0; i < bits.length; i += 1) {
      const b = bits[i];
      if (b === 0) continue;
      for (let j = 0; j < 8; j += 1) if (b & (1 << j)) yield i * 8 + j;
    }
  }
}
