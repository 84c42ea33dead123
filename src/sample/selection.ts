/**
 * Which rows a stratum gives: the n_h whose keys have the smallest sha256(seed + "\u0000" + key) ("bottom-k").
 * A row's rank depends on its key and the seed only, not on where a read started or stopped, so the same
 * input and seed choose the same keys on every resume and on every `--shard` worker; and since sha256 spreads
 * keys uniformly, the n_h smallest of N_h are a simple random sample without replacement of the stratum.
 * Two rows with the same key (a duplicated key in the input) rank by their row number.
 */
import { createHash } from 'node:crypto';

/** The rank of a key under a seed: sha256 of the seed, a NUL, and the key (UTF-8), as 64 hex digits. */
export function sampleHash(seed: string, key: string): string {
  return createHash('sha256').update(`${seed}\u0000${key}`).digest('hex');
}

export interface Ranked {
  readonly hash: string;
  readonly row: number;
}

/** a before b: the smaller hash (hex text of equal length compares as the bytes), then the smaller row. */
function before(a: Ranked, b: Ranked): boolean {
  return a.hash < b.hash || (a.hash === b.hash && a.row < b.row);
}

/**
 * The k smallest of the rows offered, in O(k) memory: a max-heap whose top is the largest kept, replaced
 * when a smaller one comes.
 */
export class BottomK {
  readonly #heap: Ranked[] = [];

  constructor(readonly k: number) {}

  offer(item: Ranked): void {
    const h = this.#heap;
    if (h.length < this.k) {
      h.push(item);
      this.#up(h.length - 1);
    } else if (this.k > 0 && before(item, h[0])) {
      h[0] = item;
      this.#down(0);
    }
  }

  get size(): number {
    return this.#heap.length;
  }

  /** The rows kept, smallest first. */
  sorted(): Ranked[] {
    return [...this.#heap].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  }

  #up(i: number): void {
    const h = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[parent], h[i])) return;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  #down(i: number): void {
    const h = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < h.length && before(h[top], h[l])) top = l;
      if (r < h.length && before(h[top], h[r])) top = r;
      if (top === i) return;
      [h[top], h[i]] = [h[i], h[top]];
      i = top;
    }
  }
}
