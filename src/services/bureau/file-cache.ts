/**
 * A small LRU of files read for rows (bureau reports by `bureau_report_path`, bank data by
 * `bank_data_path`). Many rows often share one file; it is read and analysed once per run, not per row.
 * Entries hold the promise, so rows prepared concurrently share one read. Failures are cached too (a file
 * that cannot be read is reported for every row that names it without touching the disk again). Paths are
 * real paths inside the files root: ../row-file.ts looks them up first, and keeps what it found here too
 * (`locate`), since a look-up costs a trip to libuv's thread pool (about 30 us) against 1 us for a hit.
 * Files are assumed not to change during a run.
 */
import { readFile } from 'node:fs/promises';

export interface FileCacheOptions {
  /** Most entries kept. Default 32. */
  readonly maxEntries?: number;
  /** Most bytes kept (sum of entry sizes as reported by `size`). Default 256 MiB. */
  readonly maxBytes?: number;
  /** Most look-ups kept by `locate`. Default 4096. */
  readonly maxLocations?: number;
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
  private readonly locations = new Map<string, Promise<unknown>>();
  private readonly maxLocations: number;

  constructor(opts: FileCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 32;
    this.maxBytes = opts.maxBytes ?? 256 * 1024 * 1024;
    this.maxLocations = opts.maxLocations ?? 4096;
    this.read = opts.read ?? ((p) => readFile(p));
  }

  /** `find()` for `key` (a path as a row gives it, with its root), computed once while kept (least recently used goes). */
  locate<T>(key: string, find: () => Promise<T>): Promise<T> {
    let hit = this.locations.get(key);
    if (hit) this.locations.delete(key);
    else hit = find();
    this.locations.set(key, hit);
    if (this.locations.size > this.maxLocations) this.locations.delete(this.locations.keys().next().value as string);
    return hit as Promise<T>;
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
    this.locations.clear();
    this.bytes = 0;
  }
}

/** The process-wide cache the stage kinds share (a report used by two stages of a row is read once). */
export const sharedFileCache = new FileCache();
