/**
 * The spool's records (.state/spool-<id>.records): each chunk of a session's spool (./spool.ts), listed as it
 * is written, so that the end after a kill -9 uses a killed session's chunks as it uses an earlier end's files
 * (./results-index.ts) instead of encoding their rows again. Records are framed (length, CRC-32) and a chunk is
 * used only when the journal before its point and its own bytes still check; anything else is re-encoded from
 * the journal, never a wrong file (docs/decisions/spool-records.md).
 */ import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { groupsCrc } from '../files/parquet/table-writer.js';
import { tailOf } from './results-index.js';
import {
  spoolFile,
  writeAll,
  type ChunkRecorder,
  type SegmentStart,
  type SpooledChunk,
  type SpooledSegment,
} from './spool.js';

/** 2: rows carry the run's id and session, the results files' last columns (an earlier release's chunks lack them). */
const VERSION = 2;

/**
 * One record. A record is appended after the bytes it describes are handed to the kernel (a kill -9 leaves the
 * page cache). What a chunk's record says of the journal: every line of the segment's bytes [start, lo) is in its
 * chunks so far (rows held back in the reorder buffer are after `lo`); lines of those chunks after `lo` are read
 * from the journal at the end, where they mark their chunk dirty (./chunk-plan.ts).
 */
export type SpoolRecord =
  | { readonly t: 'head'; readonly v: number; readonly id: string; readonly start: number }
  | {
      readonly t: 'open';
      readonly seg: number;
      readonly start: number;
      readonly names: string;
      readonly kinds: string;
      /** Its CSV file's name in .state (none: the session wrote no CSV). */
      readonly csv?: string;
      readonly carried?: readonly number[];
      readonly carriedFrom?: number;
    }
  /** `tail`: the hash of the journal's bytes before `lo` (./results-index.ts tailOf). */
  | {
      readonly t: 'chunk';
      readonly seg: number;
      readonly chunk: SpooledChunk;
      readonly lo: number;
      readonly trailing: readonly number[];
      readonly tail: string;
    }
  | { readonly t: 'close'; readonly seg: number; readonly end: number; readonly tail: string };

/** A record framed: its length, its CRC-32, then its bytes (v8's serialisation: the row groups' bigints). */
export function frame(rec: SpoolRecord): Buffer {
  const body = serialize(rec);
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32LE(body.length, 0);
  head.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([head, body]);
}

/** The records of a file's bytes, up to the first that is torn or does not check (none after it is trusted). */
export function unframe(buf: Buffer): { records: SpoolRecord[]; torn: boolean } {
  const records: SpoolRecord[] = [];
  let at = 0;
  while (at + 8 <= buf.length) {
    const n = buf.readUInt32LE(at);
    const body = buf.subarray(at + 8, at + 8 + n);
    if (body.length < n || crc32(body) !== buf.readUInt32LE(at + 4)) return { records, torn: true };
    try {
      records.push(deserialize(body) as SpoolRecord);
    } catch {
      return { records, torn: true };
    }
    at += 8 + n;
  }
  return { records, torn: at !== buf.length };
}

/** Writes one session's records (on the spool's thread). */
export class SpoolRecorder implements ChunkRecorder {
  readonly #fd: number;
  readonly #journal: string;
  #closed = false;

  constructor(stateDir: string, id: string, journal: string, start: number) {
    this.#journal = journal;
    this.#fd = openSync(join(stateDir, spoolFile(id, 'records')), 'w');
    this.#write({ t: 'head', v: VERSION, id, start });
  }

  #write(rec: SpoolRecord): void {
    if (!this.#closed) writeAll(this.#fd, frame(rec));
  }

  #tail(at: number): string {
    const t = tailOf(this.#journal, at);
    if (t === undefined) throw new Error(`results.ndjson could not be read up to byte ${at}`);
    return t;
  }

  open(seg: number, s: SegmentStart, csv: string | undefined): void {
    this.#write({
      t: 'open',
      seg,
      start: s.start,
      names: s.names,
      kinds: s.kinds,
      ...(csv ? { csv } : {}),
      ...(s.carried?.length ? { carried: s.carried, carriedFrom: s.carriedFrom } : {}),
    });
  }

  chunk(seg: number, chunk: SpooledChunk, lo: number, trailing: readonly number[]): void {
    this.#write({ t: 'chunk', seg, chunk, lo, trailing, tail: this.#tail(lo) });
  }

  close(seg: number, end: number): void {
    this.#write({ t: 'close', seg, end, tail: this.#tail(end) });
  }

  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }
}

/** A segment as its records tell it. */
export interface RecordedSegment extends SegmentStart {
  readonly end: number;
  readonly trailing: readonly number[];
  readonly csv?: string;
  readonly chunks: readonly SpooledChunk[];
}

/**
 * A session's segments from its records, each up to its first record that `holds` refuses (a chunk whose bytes
 * or journal no longer check). A segment whose rows held back from the one before (`carried`) are not all in
 * its chunks keeps no chunk: the end then reads the bytes of those rows' lines from the journal.
 */
export function foldRecords(
  records: readonly SpoolRecord[],
  holds: (rec: SpoolRecord & { t: 'chunk' | 'close' }, seg: RecordedSegment) => boolean,
): { segments: RecordedSegment[]; rejected: number } {
  const segs: {
    s: RecordedSegment & { chunks: SpooledChunk[]; end: number; trailing: readonly number[] };
    ok: boolean;
  }[] = [];
  let rejected = 0;
  for (const rec of records) {
    if (rec.t === 'head') continue;
    if (rec.t === 'open') {
      const { t: _, seg: __, ...start } = rec;
      segs[rec.seg] = { s: { ...start, end: rec.start, trailing: [], chunks: [] }, ok: true };
      continue;
    }
    const at = segs[rec.seg];
    if (!at?.ok) continue;
    if (!holds(rec, at.s)) {
      at.ok = false;
      rejected += 1;
    } else if (rec.t === 'chunk') {
      at.s.chunks.push(rec.chunk);
      at.s.end = rec.lo;
      at.s.trailing = rec.trailing;
    } else {
      at.s.end = rec.end;
      at.s.trailing = [];
    }
  }
  const segments = segs
    .filter((x) => x !== undefined)
    .map(({ s }) => {
      const last = s.chunks.at(-1)?.lastRow;
      const carriedIn = s.carried === undefined || s.carried.every((r) => last !== undefined && r <= last);
      return carriedIn ? s : { ...s, chunks: [], trailing: [] };
    });
  return { segments, rejected };
}

/** CRC-32 of bytes [start, end) of a file, or undefined when it is shorter. */
function rangeCrc(fd: number, start: number, end: number, buf: Buffer): number | undefined {
  let crc = 0;
  for (let at = start; at < end; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - at), at);
    if (n === 0) return undefined;
    crc = crc32(buf.subarray(0, n), crc);
    at += n;
  }
  return crc;
}

function openOrUndefined(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}

/**
 * The segments of every earlier session's spool in `stateDir` (but `except`'s, this session's), as the end
 * uses them: each session's records checked against the journal (its bytes before `cut`, where this
 * session's lines start) and against the spool's files. `rejected`: records found torn or not checking.
 */
export function recordedSpools(
  stateDir: string,
  o: { readonly journal: string; readonly cut: number; readonly except?: string },
): { segments: SpooledSegment[]; rejected: number } {
  const out: SpooledSegment[] = [];
  let rejected = 0;
  if (!existsSync(stateDir)) return { segments: out, rejected };
  const buf = Buffer.allocUnsafe(1 << 20);
  for (const f of readdirSync(stateDir)) {
    const m = /^spool-([0-9a-z]+)\.records$/.exec(f);
    if (!m || m[1] === o.except) continue;
    const id = m[1];
    const { records, torn } = unframe(readFileSync(join(stateDir, f)));
    if (torn) rejected += 1;
    const head = records[0];
    if (head?.t !== 'head' || head.v !== VERSION || head.id !== id || head.start >= o.cut) continue;
    const body = join(stateDir, spoolFile(id, 'body'));
    const bodyFd = openOrUndefined(body);
    const csvFds = new Map<string, number | undefined>();
    const tails = new Map<number, string | undefined>();
    const tail = (at: number) => {
      if (!tails.has(at)) tails.set(at, tailOf(o.journal, at));
      return tails.get(at);
    };
    try {
      const folded = foldRecords(records, (rec, seg) => {
        const at = rec.t === 'chunk' ? rec.lo : rec.end;
        if (at > o.cut || tail(at) !== rec.tail) return false;
        if (rec.t === 'close') return true;
        const c = rec.chunk;
        if (seg.csv) {
          if (!csvFds.has(seg.csv)) csvFds.set(seg.csv, openOrUndefined(join(stateDir, seg.csv)));
          const fd = csvFds.get(seg.csv);
          if (fd === undefined || rangeCrc(fd, c.csvStart, c.csvEnd, buf) !== c.csvCrc) return false;
        }
        return c.groups === undefined || (bodyFd !== undefined && groupsCrc(bodyFd, c.groups, buf) === c.pqCrc);
      });
      rejected += folded.rejected;
      for (const s of folded.segments)
        out.push({
          start: s.start,
          end: s.end,
          rows: s.chunks.reduce((n, c) => n + c.rows, 0),
          ...(s.chunks.length > 0 ? { firstRow: s.chunks[0].firstRow, lastRow: s.chunks.at(-1)!.lastRow } : {}),
          ...(s.carried?.length ? { carried: s.carried, carriedFrom: s.carriedFrom } : {}),
          ...(s.trailing.length > 0 ? { trailing: s.trailing } : {}),
          names: s.names,
          kinds: s.kinds,
          ...(s.csv ? { csvPath: join(stateDir, s.csv) } : {}),
          chunks: s.chunks,
          parquet: bodyFd !== undefined && s.chunks.every((c) => c.groups !== undefined),
          parquetPath: body,
          chunkCounts: true,
        });
    } finally {
      if (bodyFd !== undefined) closeSync(bodyFd);
      for (const fd of csvFds.values()) if (fd !== undefined) closeSync(fd);
    }
  }
  out.sort((a, b) => a.start - b.start);
  return { segments: out, rejected };
}
