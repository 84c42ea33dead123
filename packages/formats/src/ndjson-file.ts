/**
 * Append-only NDJSON files that survive `kill -9`. Lines of one event-loop turn are gathered and handed to
 * the kernel with one write() at the end of that turn (setImmediate), so a killed process loses at most the
 * rows finished in its last turn, which count as in flight and are re-sent on resume; a write() per row
 * cost more than the rest of a fast run. A write that fails part-way (a full disk) is cut back at once to the
 * last whole line, and the failure is kept: every later append throws it, so the run stops with whole lines
 * only. A torn last line all the same (power loss, kill -9 inside a write) is cut off when the file is opened
 * again. fsync runs on a short timer (group commit): a power cut can lose the last ~200 ms.
 */
import { closeSync, fstatSync, fsync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { unbatch } from './input/lines.js';
import { journalLineBatches } from './journal-file.js';

export class AppendFile {
  readonly path: string;
  #fd: number;
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;
  lines = 0;
  /** Bytes in the file, lines handed to the kernel so far included (pending ones not). */
  bytes: number;

  constructor(path: string, mode = 0o644) {
    this.path = path;
    this.#fd = openSync(path, 'a+', mode);
    repairTail(this.#fd);
    this.bytes = fstatSync(this.#fd).size;
    this.#timer = setInterval(() => this.#syncInBackground(), 200);
    this.#timer.unref();
  }

  /**
   * Files whose pending lines must reach the kernel before this file's: a row's transactions and secrets
   * before its results line, so that a crash never leaves a done row without them.
   */
  readonly before: { flush(): void }[] = [];

  /** Told the file's length after each write of lines (a whole line ends there). */
  onWrite: ((bytes: number) => void) | undefined;
  /**
   * Told when a write of gathered lines failed (a full disk), as it happens: at the end of an event-loop turn
   * no caller is there to catch it. The next append or flush throws it too.
   */
  onFailure: ((err: Error) => void) | undefined;

  #pending: string[] = [];
  #pendingBytes = 0;
  #scheduled = false;
  #failure: Error | undefined;

  /**
   * One line, without its newline (JSON.stringify output never holds one). Throws (e.g. ENOSPC from an
   * earlier flush) when lines could not be written: the caller stops the run.
   */
  append(line: string): void {
    if (this.#failure) throw this.#failure;
    // Not inspected here: a line built by concatenation is flattened only once, when the batch is joined.
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    this.lines += 1;
    if (this.#pendingBytes > 256 * 1024) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flushQuietly());
    }
  }

  #flushQuietly(): void {
    try {
      this.flush();
    } catch {
      /* kept in #failure, told to onFailure */
    }
  }

  /** Bytes in the file with the lines still gathered (those counted as characters: near enough for an estimate). */
  get size(): number {
    return this.bytes + this.#pendingBytes + this.#pending.length;
  }

  /** Why writing failed, if it did (every later append and flush throws it). */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Hands the gathered lines to the kernel. Throws when they could not all be written (see the header). */
  flush(): void {
    for (const f of this.before) f.flush();
    this.#scheduled = false;
    if (this.#failure) throw this.#failure;
    if (this.#pending.length === 0) return;
    const count = this.#pending.length;
    const text = `${count === 1 ? this.#pending[0] : this.#pending.join('\n')}\n`;
    this.#pending = [];
    this.#pendingBytes = 0;
    const bytes = Buffer.byteLength(text);
    // The string goes to the kernel as it is (no Buffer on the JS heap); a short write (rare on a local file,
    // or the disk filling up) finishes from a Buffer at the byte where it stopped.
    let written = 0;
    let buf: Buffer | undefined;
    try {
      written = writeSync(this.#fd, text);
      if (written < bytes) {
        buf = Buffer.from(text);
        while (written < bytes) written += writeSync(this.#fd, buf, written);
      }
    } catch (err) {
      this.#failed(err as Error, buf ?? Buffer.from(text), written, count);
      throw err;
    }
    this.bytes += bytes;
    this.onWrite?.(this.bytes);
    this.#dirty = true;
  }

  /**
   * A write of `count` lines (`text`) stopped after `written` bytes: the file is cut back to the last whole
   * line in it (a truncate that shortens a file needs no room), and the lines that did not make it are no
   * longer counted.
   */
  #failed(err: Error, text: Buffer, written: number, count: number): void {
    this.#failure = err;
    const kept = written > 0 ? text.lastIndexOf(0x0a, written - 1) + 1 : 0;
    let keptLines = 0;
    for (let i = text.indexOf(0x0a); i !== -1 && i < kept; i = text.indexOf(0x0a, i + 1)) keptLines += 1;
    try {
      if (written > kept) ftruncateSync(this.#fd, this.bytes + kept);
    } catch {
      /* the file cannot even be cut: its torn tail is cut when it is opened again (repairTail) */
    }
    this.lines -= count - keptLines;
    if (kept > 0) {
      this.bytes += kept;
      this.onWrite?.(this.bytes);
      this.#dirty = true;
    }
    this.onFailure?.(err);
  }

  /**
   * The group commit: on libuv's thread pool, so the event loop (which is what limits a fast run) never
   * waits for the disk. A failing disk shows in the next write, which stops the run.
   */
  #syncInBackground(): void {
    if (!this.#dirty || this.#syncing) return;
    this.#dirty = false;
    this.#syncing = true;
    fsync(this.#fd, () => {
      this.#syncing = false;
    });
  }

  #syncing = false;

  /**
   * The lines appended so far handed to the kernel, then to the disk on libuv's thread pool: resolves once
   * they are on it (what may be written only after them waits for this). Never rejects: a failing disk shows
   * in the next write.
   */
  flushAndSync(): Promise<void> {
    this.flush();
    return new Promise((resolve) => fsync(this.#fd, () => resolve()));
  }

  /** Synchronous, also when a background sync may still be running (close must not race it). */
  sync(): void {
    if (!this.#dirty && !this.#syncing) return;
    this.#dirty = false;
    try {
      fsyncSync(this.#fd);
    } catch {
      /* reported by the next append */
    }
  }

  /** Flushes, syncs and closes; throws, after closing, when the file's lines could not all be written. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      this.flush();
    } finally {
      this.sync();
      closeSync(this.#fd);
    }
  }
}

/** Cuts a torn last line (no trailing newline) so the file holds whole lines only. */
function repairTail(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  // Walk back to the last newline.
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    if (end === size && chunk[n - 1] === 0x0a) return;
    const idx = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (idx !== -1) {
      ftruncateSync(fd, start + idx + 1);
      return;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
}

/**
 * The lines of an NDJSON file parsed, a file chunk at a time (no generator step per line); see readNdjson. A
 * journal is read in whichever form it is (./journal-file.ts: plain, or compacted once its run finished).
 * `range`: only the bytes from `start` up to `end` (exclusive), which must be line boundaries.
 */
export async function* readNdjsonBatches<T = unknown>(
  path: string,
  range?: { readonly start: number; readonly end: number },
): AsyncGenerator<(T | null)[]> {
  for await (const lines of journalLineBatches(path, range)) {
    const out: (T | null)[] = [];
    for (const l of lines) {
      if (l.text === '') continue;
      try {
        out.push(JSON.parse(l.text) as T);
      } catch {
        out.push(null);
      }
    }
    if (out.length > 0) yield out;
  }
}

/** Lines of an NDJSON file, parsed; unparsable lines are passed as `null` (callers decide). */
export function readNdjson<T = unknown>(path: string): AsyncGenerator<T | null> {
  return unbatch(readNdjsonBatches<T>(path));
}

/** The data row number at the start of a line we wrote (`{"row":N,...`), without parsing all of it. */
export function rowOfLine(text: string): number | undefined {
  const m = /^\{"row":(\d+)[,}]/.exec(text);
  if (m) return Number(m[1]);
  try {
    const v = JSON.parse(text) as { row?: unknown };
    return typeof v.row === 'number' ? v.row : undefined;
  } catch {
    return undefined;
  }
}
