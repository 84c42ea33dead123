/**
 * Reads a journal (results.ndjson, errors.ndjson, .state/transactions.ndjson) from a byte position onwards,
 * whole lines only: the run appends while the sink reads, and a line is the sink's only once its newline is
 * on the disk. The position moves only when the caller says the lines are written.
 */
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

  constructor(readonly path: string, position: number) {
    this.#position = position;
  }

  get position(): number {
    return this.#position;
  }

  /**
   * The whole lines between the position and `end` (at most about `maxBytes` of them, but always at least one
   * whole line when there is one), and where they end. Empty lines are left out.
   */
  async read(end: number, maxBytes: number): Promise<{ lines: string[]; next: number }> {
    if (end <= this.#position) return { lines: [], next: this.#position };
    this.#handle ??= await open(this.path, 'r');
    let want = Math.min(end - this.#position, maxBytes);
    for (;;) {
      const buf = Buffer.allocUnsafe(want);
      const { bytesRead } = await this.#handle.read(buf, 0, want, this.#position);
      const last = buf.lastIndexOf(10, bytesRead - 1);
      if (last >= 0) {
        const lines = buf.toString('utf8', 0, last).split('\n').filter((l) => l !== '');
        return { lines, next: this.#position + last + 1 };
      }
      // One line longer than maxBytes: read further, up to what the file holds.
      if (want >= end - this.#position) return { lines: [], next: this.#position };
      want = Math.min(end - this.#position, want * 2);
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
