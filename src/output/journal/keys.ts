/**
 * The keys of the rows an output folder already holds (results, errors, and the errors an interrupted
 * --retry-errors is running again), each row's as a 32-bit hash: a database input read again checks that every
 * row number it meets that the folder holds still names the same key. Rows are numbered in read order, so a
 * table changed behind the run (rows added or removed before the last row read, keys changed) would
 * otherwise make a row number name another row, which would then be skipped as done, or run under
 * another row's line. 4 bytes a row: a million rows cost 4 MB; a hash collision (1 in 4 billion a row)
 * lets a change of that one row pass unseen.
 */
import { join } from 'node:path';
import { fnv1a } from '../../input/shard.js';
import { FILES } from '@bre-batch/formats';
import { journalLineBatches } from '@bre-batch/formats/journal-file';

/** `{"row":N,` then an error line's `"line":L,` then `"key":...`: as the run writes both kinds of line. */
const HEAD = /^\{"row":(\d+),(?:"line":(?:null|-?\d+),)?"key":(null|"(?:[^"\\]|\\.)*")[,}]/;

function keyHash(key: string | null): number {
  // Never 0: that marks a row with no line.
  return (key === null ? 0x9e3779b9 : fnv1a(`k${key}`)) || 1;
}

/** The row and key of a journal line; undefined for a line that is not one. */
export function rowAndKey(text: string): { row: number; key: string | null } | undefined {
  const m = HEAD.exec(text);
  if (m) return { row: Number(m[1]), key: JSON.parse(m[2]) as string | null };
  try {
    const v = JSON.parse(text) as { row?: unknown; key?: unknown };
    if (typeof v.row === 'number' && Number.isInteger(v.row) && (typeof v.key === 'string' || v.key === null))
      return { row: v.row, key: v.key };
  } catch {
    /* a torn or foreign line: not ours to check */
  }
  return undefined;
}

export class JournalKeys {
  #hashes = new Uint32Array(1024);
  #size = 0;

  /** Rows after `after` (a resume's start) are kept; `after` 0 keeps every row. */
  private constructor(readonly after: number) {}

  static async read(dir: string, after: number): Promise<JournalKeys> {
    const keys = new JournalKeys(after);
    for (const name of [FILES.results, FILES.errors, FILES.retrying]) {
      for await (const lines of journalLineBatches(join(dir, name))) {
        for (const l of lines) {
          if (l.text === '') continue;
          const at = rowAndKey(l.text);
          if (at && at.row > after) keys.#set(at.row, at.key);
        }
      }
    }
    return keys;
  }

  #set(row: number, key: string | null): void {
    const i = row - this.after - 1;
    if (i >= this.#hashes.length) {
      let n = this.#hashes.length;
      while (n <= i) n *= 2;
      const grown = new Uint32Array(n);
      grown.set(this.#hashes);
      this.#hashes = grown;
    }
    if (this.#hashes[i] === 0) this.#size += 1;
    this.#hashes[i] = keyHash(key);
  }

  /** Rows with a line. */
  get size(): number {
    return this.#size;
  }

  /** Whether the folder's line for `row` has `key`; undefined when the folder has no line for it. */
  matches(row: number, key: string | null): boolean | undefined {
    const i = row - this.after - 1;
    if (i < 0 || i >= this.#hashes.length || this.#hashes[i] === 0) return undefined;
    return this.#hashes[i] === keyHash(key);
  }
}
