/**
 * Reads a journal (results.ndjson, errors.ndjson, .state/transactions.ndjson) from a byte position onwards,
 * whole lines only: the run appends while the sink reads, and a line is the sink's only once its newline is
 * on the disk. The position moves only when the caller says the lines are written.
 */
import { isAscii } from 'node:buffer';
import { existsSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** What names one file across a rename (--retry-errors moves errors.ndjson aside and starts a new one). */
export function fileIdentity(path: string): string | null {
  if (!existsSync(path)) return null;
  const st = statSync(path, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export class JournalTail {
  #handle: FileHandle | undefined;
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
    this.#handle ??= await open(this.path, 'r');
    let want = Math.min(end - from, maxBytes);
    for (;;) {
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await this.#handle.read(buf, 0, want, from);
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
  }
}
