/**
 * The one place a journal is opened for reading, whichever form it is in on disk (a finished night
 * is gzip'ed to fit on disk). While a run writes them, results.ndjson, errors.ndjson, secrets.ndjson and
 * .state/transactions.ndjson are plain NDJSON; once the run has finished they are gzip'ed in place
 * (src/output/journal/compact.ts) and the folder holds X.gz instead of X. The rule every reader follows:
 * - X present: X is the journal, also when X.gz is there too (a compaction or an expansion was cut short
 *   between its rename and its removal: X is whole in both cases);
 * - X.gz alone: its decompressed bytes are the journal, and byte positions (the sink's, the spool's) count
 *   those bytes;
 * - X.gz.tmp, X.gunzip.tmp: a step cut short, never read (the next compaction or expansion removes it).
 * A compacted journal carries, in its gzip header's comment, the size and identity the plain file had: the
 * sink's commit table knows a journal by its identity and position (src/output/sink/tail.ts), so a `load`
 * after compaction starts where the run's own sink stopped instead of writing every row again.
 */
import { closeSync, createReadStream, existsSync, openSync, readSync, statSync } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { readLineBatches, unbatch, type PhysicalLine } from './input/lines.js';

/** Longest journal line read (a row with many features and offers is far shorter). */
const MAX_LINE_BYTES = 256 * 1024 * 1024;

/** The compacted form's name. */
export const gzPathOf = (path: string): string => `${path}.gz`;

/** What the plain journal was, written into the compacted one's gzip header. */
export interface CompactedRecord {
  /** Bytes of the plain journal: positions into the compacted one count these. */
  readonly bytes: number;
  /** The plain file's identity (src/output/sink/tail.ts fileIdentity's form). */
  readonly identity: string;
}

/** The mark that tells our header comment from any other gzip's. */
const RECORD_TAG = 'bre-batch-journal';

/** The gzip header's comment holding `record` (RFC 1952: FLG.FCOMMENT, a zero-terminated latin1 string). */
export function gzipHeader(record: CompactedRecord): Buffer {
  const comment = Buffer.from(`${JSON.stringify({ [RECORD_TAG]: 1, ...record })}\0`, 'latin1');
  // ID1 ID2 CM=deflate FLG=FCOMMENT MTIME(4)=0 XFL=0 OS=3 (Unix)
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0x10, 0, 0, 0, 0, 0, 3]), comment]);
}

/** The record in a compacted journal's header; undefined for a gzip file without one (or not ours). */
function readCompactedRecord(gzPath: string): CompactedRecord | undefined {
  let fd: number;
  try {
    fd = openSync(gzPath, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    if (n < 11 || buf[0] !== 0x1f || buf[1] !== 0x8b || buf[3] !== 0x10) return undefined;
    const end = buf.indexOf(0, 10);
    if (end < 0 || end >= n) return undefined;
    const v = JSON.parse(buf.toString('latin1', 10, end)) as Record<string, unknown>;
    if (v[RECORD_TAG] !== 1 || typeof v.bytes !== 'number' || typeof v.identity !== 'string') return undefined;
    return { bytes: v.bytes, identity: v.identity };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** 'plain', 'gzip' (compacted), or undefined when the journal is in neither form (not written). */
export function journalForm(path: string): 'plain' | 'gzip' | undefined {
  if (existsSync(path)) return 'plain';
  if (existsSync(gzPathOf(path))) return 'gzip';
  return undefined;
}

export function journalExists(path: string): boolean {
  return journalForm(path) !== undefined;
}

/** dev:ino, the identity of one file across renames. */
export function inodeOf(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/**
 * What names the journal across a rename (--retry-errors starts a new errors.ndjson) and across its
 * compaction (the plain file's identity, from the header); null when there is none.
 */
export function journalIdentity(path: string): string | null {
  const form = journalForm(path);
  if (form === 'plain') return inodeOf(path);
  if (form === 'gzip') return readCompactedRecord(gzPathOf(path))?.identity ?? inodeOf(gzPathOf(path));
  return null;
}

/** Bytes of the journal as NDJSON (the plain file's, or the plain size a compacted one records); 0 when absent. */
export function journalSize(path: string): number {
  const form = journalForm(path);
  if (form === 'plain') return statSync(path).size;
  if (form === 'gzip') return readCompactedRecord(gzPathOf(path))?.bytes ?? gzipTrailerSize(gzPathOf(path));
  return 0;
}

/** A gzip file's ISIZE (its plain size modulo 2^32): for a compacted file whose header has no record. */
function gzipTrailerSize(gzPath: string): number {
  const fd = openSync(gzPath, 'r');
  try {
    const size = statSync(gzPath).size;
    const buf = Buffer.alloc(4);
    if (size < 18 || readSync(fd, buf, 0, 4, size - 4) !== 4) return 0;
    return buf.readUInt32LE(0);
  } finally {
    closeSync(fd);
  }
}

/**
 * The journal's bytes as NDJSON, plain or decompressed; `range` (line boundaries, `end` exclusive) in those
 * bytes. undefined when the journal does not exist.
 */
export function openJournal(
  path: string,
  range?: { readonly start: number; readonly end: number },
): AsyncIterable<Buffer> | undefined {
  const form = journalForm(path);
  if (form === undefined) return undefined;
  if (form === 'plain')
    return createReadStream(path, {
      highWaterMark: 256 * 1024,
      ...(range ? { start: range.start, end: range.end - 1 } : {}),
    }) as Readable & AsyncIterable<Buffer>;
  return gunzipRange(gzPathOf(path), range?.start ?? 0, range?.end ?? Number.POSITIVE_INFINITY);
}

/** The decompressed bytes of `gzPath` from `start` up to `end` (read from its start: gzip has no index). */
async function* gunzipRange(gzPath: string, start: number, end: number): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  // pipeline, not pipe: a failing read destroys the gunzip stream, and the loop below throws it.
  pipeline(createReadStream(gzPath, { highWaterMark: 256 * 1024 }), gunzip, () => undefined);
  let at = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      const from = at;
      at += chunk.length;
      if (at <= start) continue;
      const piece = chunk.subarray(Math.max(0, start - from), Math.min(chunk.length, end - from));
      if (piece.length > 0) yield piece;
      if (at >= end) break;
    }
  } finally {
    gunzip.destroy();
  }
}

/** The journal's lines, a chunk's worth at a time (empty lines included); nothing when it does not exist. */
export async function* journalLineBatches(
  path: string,
  range?: { readonly start: number; readonly end: number },
): AsyncGenerator<PhysicalLine[]> {
  if (range && range.end <= range.start) return;
  const bytes = openJournal(path, range);
  if (bytes) yield* readLineBatches(bytes, MAX_LINE_BYTES);
}

/** The journal's lines one by one (see journalLineBatches). */
export function journalLines(path: string): AsyncGenerator<PhysicalLine> {
  return unbatch(journalLineBatches(path));
}
