/**
 * Reads a journal (results.ndjson, errors.ndjson, .state/transactions.ndjson) from a byte position onwards,
 * whole lines only: the run appends while the sink reads, and a line is the sink's only once its newline is
 * on the disk. The position moves only when the caller says the lines are written. A finished run's journal
 * is compacted (packages/formats/src/journal-file.ts): `load` then reads its decompressed bytes, positions counting
 * those, forwards (a position behind the last read starts the decompression over).
 */
import { isAscii } from 'node:buffer';
import { open, type FileHandle } from 'node:fs/promises';
import { journalForm, journalIdentity, journalSize, openJournal } from '@bre-batch/formats/journal-file';

/**
 * What names one journal across a rename (--retry-errors moves errors.ndjson aside and starts a new one) and
 * across its compaction (the plain file's identity, kept in the compacted one).
 */
export function fileIdentity(path: string): string | null {
  return journalIdentity(path);
}

/** The journal's bytes as NDJSON (a compacted one's plain size). */
export function fileSize(path: string): number {
  try {
    return journalSize(path);
  } catch {
    return 0;
  }
}

async function* nothing(): AsyncGenerator<Buffer> {}

/** A compacted journal's decompressed bytes, read forwards from any position. */
class GunzipCursor {
  #chunks: AsyncIterator<Buffer> | undefined;
  /** Decompressed bytes from #start on, not yet handed out past. */
  #buf: Buffer = Buffer.alloc(0);
  #start = 0;
  #ended = false;

  constructor(readonly path: string) {}

  /** Up to `want` bytes from `from` (fewer at the end of the journal). */
  async read(from: number, want: number): Promise<Buffer> {
    if (this.#chunks === undefined || from < this.#start) {
      await this.close();
      const bytes = openJournal(this.path, { start: from, end: Number.POSITIVE_INFINITY }) ?? nothing();
      this.#chunks = bytes[Symbol.asyncIterator]();
      this.#buf = Buffer.alloc(0);
      this.#start = from;
      this.#ended = false;
    }
    if (from > this.#start) {
      const drop = Math.min(from - this.#start, this.#buf.length);
      this.#buf = this.#buf.subarray(drop);
      this.#start += drop;
    }
    while (!this.#ended && (this.#start < from || this.#buf.length < want)) {
      const r = await this.#chunks.next();
      if (r.done) {
        this.#ended = true;
        break;
      }
      this.#buf = this.#buf.length === 0 ? r.value : Buffer.concat([this.#buf, r.value]);
      if (this.#start < from) {
        const drop = Math.min(from - this.#start, this.#buf.length);
        this.#buf = this.#buf.subarray(drop);
        this.#start += drop;
      }
    }
    return this.#buf.subarray(0, want);
  }

  async close(): Promise<void> {
    await this.#chunks?.return?.();
    this.#chunks = undefined;
  }
}

export class JournalTail {
  #handle: FileHandle | undefined;
  #gunzip: GunzipCursor | undefined;
  #position: number;

  constructor(
    readonly path: string,
    position: number,
  ) {
    this.#position = position;
  }

  get position(): number {
    return this.#position;
  }

  /**
   * The whole lines between the position (or `from`, a place after it: reading ahead) and `end` (at most about
   * `maxBytes` of them, but always at least one whole line when there is one), and where they end. Empty lines
   * are left out.
   */
  async read(end: number, maxBytes: number, from = this.#position): Promise<{ lines: string[]; next: number }> {
    if (end <= from) return { lines: [], next: from };
    if (!this.#handle && !this.#gunzip) {
      if (journalForm(this.path) === 'gzip') this.#gunzip = new GunzipCursor(this.path);
      else this.#handle = await open(this.path, 'r');
    }
    let want = Math.min(end - from, maxBytes);
    for (;;) {
      let buf: Buffer;
      let bytesRead: number;
      if (this.#gunzip) {
        buf = await this.#gunzip.read(from, want);
        bytesRead = buf.length;
      } else {
        buf = Buffer.allocUnsafe(want);
        ({ bytesRead } = await this.#handle!.read(buf, 0, want, from));
      }
      const last = buf.lastIndexOf(10, bytesRead - 1);
      if (last >= 0) {
        // Text that is all ASCII (most journals) is the same in latin1, which decodes several times faster.
        const text = buf.toString(isAscii(buf.subarray(0, last)) ? 'latin1' : 'utf8', 0, last);
        const lines = text.split('\n').filter((l) => l !== '');
        return { lines, next: from + last + 1 };
      }
      // One line longer than maxBytes: read further, up to what the file holds.
      if (want >= end - from) return { lines: [], next: from };
      want = Math.min(end - from, want * 2);
    }
  }

  advance(to: number): void {
    this.#position = to;
  }

  async close(): Promise<void> {
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    await this.#gunzip?.close().catch(() => undefined);
    this.#gunzip = undefined;
  }
}
