/**
 * The index of results.csv and results.parquet (.state/results-index.bin), written at the end of a run
 * beside them, so that the end of the next session uses them instead of reading every earlier row from the
 * journal again (a resumed run encodes only the rows where the sessions meet). It lists the
 * files' chunks as the spool lists its own (./spool.ts SpooledChunk: rows, row range, the journal bytes of
 * their lines, CSV byte range, row group), the journal's length they cover, and what the caller counted over
 * those lines (summary.json's decisions), which stands for reading them.
 *
 * It is a cache, never the truth: it is used only when everything it describes is still so (the journal's
 * bytes up to its length, checked by their length and a hash of their end; each results file's length and
 * modification time; the final columns), else the end reads the journal as if it were not there. It is
 * removed before the results files are replaced, and written after both are, so a crash between leaves
 * none. v8's serialisation keeps the row groups' metadata (bigints, shared objects) as they are.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import type { ResultFiles, SpooledChunk } from './spool.js';

/** 2: rows carry the run's id and session, the results files' last columns (an earlier release's chunks lack them). */
const VERSION = 2;
/** The journal's last bytes hashed: a journal cut and written again differs there. */
const TAIL_BYTES = 64 * 1024;

interface FileStamp {
  readonly bytes: number;
  readonly mtimeMs: number;
}

export interface ResultsIndex {
  readonly version: number;
  /** The journal's bytes [0, size) hold exactly the files' rows. */
  readonly size: number;
  readonly tail: string;
  readonly names: string;
  readonly kinds: string;
  readonly sampled: boolean;
  readonly csv?: FileStamp;
  readonly parquet?: FileStamp;
  /** The files' rows in row order, a chunk after another. */
  readonly chunks: readonly SpooledChunk[];
  /** What the caller counted over the result lines of [0, size). */
  readonly tally: unknown;
}

/** A hash of the journal's bytes [size - TAIL_BYTES, size) and its length. */
export function tailOf(journal: string, size: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(journal, 'r');
    const from = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - from);
    if (readSync(fd, buf, 0, buf.length, from) !== buf.length) return undefined;
    return createHash('sha256').update(`${size}\n`).update(buf).digest('hex');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function stamp(path: string): FileStamp | undefined {
  try {
    const st = statSync(path);
    return { bytes: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

const same = (a: FileStamp | undefined, b: FileStamp | undefined) =>
  a !== undefined && b !== undefined && a.bytes === b.bytes && a.mtimeMs === b.mtimeMs;

export interface IndexCheck {
  readonly journal: string;
  /** The journal's length now: the index may cover a part of it (the sessions since append). */
  readonly size: number;
  /** Lines before this byte are of earlier sessions: the index must cover no line of this one. */
  readonly cut: number;
  readonly files: ResultFiles;
  readonly names: string;
  readonly kinds: string;
  readonly sampled: boolean;
}

/** The index at `path` when it still describes the folder's results files and journal, else undefined. */
export function readIndex(path: string, o: IndexCheck): ResultsIndex | undefined {
  if (!existsSync(path)) return undefined;
  let idx: ResultsIndex;
  try {
    idx = deserialize(readFileSync(path)) as ResultsIndex;
  } catch {
    return undefined;
  }
  if (idx?.version !== VERSION || !Array.isArray(idx.chunks)) return undefined;
  if (idx.size > o.size || idx.size > o.cut) return undefined;
  if (idx.names !== o.names || idx.kinds !== o.kinds || idx.sampled !== o.sampled) return undefined;
  // Every file this end writes must be there to be used, as it was written.
  if (o.files.csv && !same(idx.csv, stamp(o.files.csv))) return undefined;
  if (o.files.parquet && !same(idx.parquet, stamp(o.files.parquet))) return undefined;
  if (tailOf(o.journal, idx.size) !== idx.tail) return undefined;
  return idx;
}

/** Removes the index (before the files it describes are replaced). */
export function dropIndex(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Writes the index of the files just written (under a temporary name, renamed when complete); one that
 * cannot be written is left out.
 */
export function writeIndex(
  path: string,
  o: Omit<IndexCheck, 'cut'> & { readonly chunks: readonly SpooledChunk[]; readonly tally: unknown },
): void {
  const tail = tailOf(o.journal, o.size);
  const csv = o.files.csv ? stamp(o.files.csv) : undefined;
  const parquet = o.files.parquet ? stamp(o.files.parquet) : undefined;
  if (tail === undefined || (o.files.csv && !csv) || (o.files.parquet && !parquet)) return;
  const idx: ResultsIndex = {
    version: VERSION,
    size: o.size,
    tail,
    names: o.names,
    kinds: o.kinds,
    sampled: o.sampled,
    ...(csv ? { csv } : {}),
    ...(parquet ? { parquet } : {}),
    chunks: o.chunks,
    tally: o.tally,
  };
  try {
    // The folder's mode (the process's umask) as every file of it.
    writeFileSync(`${path}.tmp`, serialize(idx));
    renameSync(`${path}.tmp`, path);
  } catch {
    // A cache: without it the next end reads the journal. A full disk is met by what the run writes next.
    rmSync(`${path}.tmp`, { force: true });
  }
}
