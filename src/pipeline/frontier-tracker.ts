/**
 * A database input's resume point (the frontier): the last row, in read order, such that every row read up
 * to it is done (written to results or errors, out of this shard, already done) and that ends its key,
 * so that reading again after its key skips nothing undone (packages/formats/src/frontier.ts).
 *
 * Rows are done out of order (many are in flight); the tracker keeps the rows read and not yet passed, in read
 * order, and moves the frontier over the done ones at the front. A row that is never done (a stop, a row
 * --retry-errors leaves for later) holds it where it is: the frontier is only ever conservative.
 */
import type { InputRow } from '@bre-batch/core/types';

export interface FrontierPoint {
  readonly row: number;
  /** The key as the database gave it (text); null for the last of the rows whose key is NULL. */
  readonly key: string | null;
}

interface Pending {
  readonly row: number;
  readonly key: string | null;
  readonly groupEnd: boolean;
  done: boolean;
}

export class FrontierTracker {
  #pending: Pending[] = [];
  #head = 0;
  #point: FrontierPoint | undefined;
  #next: number;

  /** `start`: where this session's reading starts (a resume's frontier), undefined from the beginning. */
  constructor(start?: FrontierPoint) {
    this.#point = start;
    this.#next = (start?.row ?? 0) + 1;
  }

  /** The rows must come in read order, each once (row numbers follow one another). */
  read(row: Pick<InputRow, 'row' | 'sourceKey' | 'groupEnd'>): void {
    if (row.row !== this.#next) throw new Error(`the frontier expected row ${this.#next}, got ${row.row}`);
    this.#next += 1;
    this.#pending.push({ row: row.row, key: row.sourceKey ?? null, groupEnd: row.groupEnd === true, done: false });
  }

  /** The row is done for good: its line is in results or errors, or it is not this run's to do. */
  done(row: number): void {
    const i = this.#head + (row - (this.#pending[this.#head]?.row ?? row));
    const p = this.#pending[i];
    if (p === undefined || p.row !== row) return; // passed already, or never read by this tracker
    p.done = true;
    if (i === this.#head) this.#advance();
  }

  #advance(): void {
    while (this.#head < this.#pending.length && this.#pending[this.#head].done) {
      const p = this.#pending[this.#head];
      if (p.groupEnd) this.#point = { row: p.row, key: p.key };
      this.#head += 1;
    }
    // Drop the passed rows now and then, not on every step (a splice is a copy).
    if (this.#head > 4096 && this.#head * 2 > this.#pending.length) {
      this.#pending = this.#pending.slice(this.#head);
      this.#head = 0;
    }
  }

  /** The frontier: undefined until a whole key's rows are done (nor was there one to start from). */
  get point(): FrontierPoint | undefined {
    return this.#point;
  }

  /** Rows read and not yet passed by the frontier. */
  get behind(): number {
    return this.#pending.length - this.#head;
  }
}
