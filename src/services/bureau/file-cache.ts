/**
 * A small LRU of files read for rows (bureau reports by `bureau_report_path`, bank data by
 * `bank_data_path`). Many rows often share one file; it is read and analysed once per run, not per row.
 * Entries hold the promise, so rows prepared concurrently share one read. Failures are cached too (a
 * missing file is reported for every row that names it without touching the disk again).
 * Files are assumed not to change during a run.
 */
import { readFile } from 'node:fs/promises';

export interface FileCacheOptions {
  /** Most entries kept. Default 32. */
  readonly maxEntries?: number;
  /** Most bytes kept (sum of entry sizes as reported by `size`). Default 256 MiB. */
  readonly maxBytes?: number;
  readonly read?: (path: string) => Promise<Buffer>;
}

interface Entry {
  readonly promise: Promise<unknown>;
  size: number;
}

export class FileCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly read: (path: string) => Promise<Buffer>;

  constructor(opts: FileCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 32;
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    this.read = opts.read ?? ((p) => readFile(p));
  }

  /**
   * `transform(bytes)` of the file at absolute `path`, computed once. `kind` separates entries of the same
   * path analysed differently (a report vs bank data). Rejects with the read error (cached).
   */
  get<T>(path: string, kind: string, transform: (bytes: Buffer) => T): Promise<T> {
    const key = `${kind}\0${path}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.promise as Promise<T>;
    }
    const entry: Entry = { promise: Promise.resolve(), size: 0 };
    const promise = this.read(path).then((bytes) => {
      entry.size = bytes.length;
      if (this.entries.get(key) === entry) this.bytes += bytes.length;
      const value = transform(bytes);
      this.evict();
      return value;
    });
    promise.catch(() => undefined); // the caller handles it; the cached copy must not be "unhandled"
    (entry as { promise: Promise<unknown> }).promise = promise;
    this.entries.set(key, entry);
    this.evict();
    return promise;
  }

  private evict(): void {
    while (this.entries.size > this.maxEntries || (this.bytes > this.maxBytes && this.entries.size > 1)) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      this.bytes -= entry.size;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** The process-wide cache the stage kinds share (a report used by two stages of a row is read once). */
export const sharedFileCache = new FileCache();
