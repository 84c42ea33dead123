/**
 * results.csv and results.parquet written while the run goes (`ResultSpool`), on the spool's thread
 * (./spool-thread.ts), so that the end of a run does not read results.ndjson again: the end (./assemble.ts) uses
 * a chunk whose row range holds no other line of the folder as it is, and encodes the rest from the journal
 * (./chunk-plan.ts). The spool belongs to one session: a crash leaves files that the next session removes.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { csvField } from '../files/csv-line.js';
import { CHUNK_ROWS } from './chunk-rows.js';
import {
  asJsonValue,
  type ColumnUnion,
  type ResultColumn,
  type ResultStages,
  type StageColumns,
} from '../journal/columns.js';
import { excelSafe } from '../files/excel.js';
import { kindOfTypes, type ParquetColumn } from '../files/parquet/schema.js';
import { ParquetBody, type GroupsWritten, type ParquetGroupWriter } from '../files/parquet/table-writer.js';
import { PROVENANCE_COLUMNS } from '@bre-batch/formats/tables';
import { MinHeap } from './min-heap.js';

export interface ResultLine {
  row: number;
  key: unknown;
  /** A sampled run's (`run --sample`): the row's stratum and design weight. */
  stratum?: unknown;
  weight?: unknown;
  /** The run and session that wrote the line (absent in an older bre-batch's lines). */
  run_id?: unknown;
  run_session?: unknown;
  stages: Record<string, Record<string, unknown>>;
}

export interface ResultFiles {
  readonly csv?: string;
  readonly parquet?: string;
}

/**
 * The columns before the stages': `row,key`, and in a sampled run `stratum,weight` (interface: the sample
 * design in an output folder).
 */
function leadingColumns(sampled: boolean): ParquetColumn[] {
  const lead: ParquetColumn[] = [
    { name: 'row', kind: 'int64' },
    { name: 'key', kind: 'string' },
  ];
  return sampled ? [...lead, { name: 'stratum', kind: 'string' }, { name: 'weight', kind: 'double' }] : lead;
}

/**
 * The columns after the stages': the run and session that wrote the row (packages/formats/src/tables.ts), last
 * so that a reader by position of an older results.csv keeps reading the same columns.
 */
const TRAILING_COLUMNS: readonly ParquetColumn[] = PROVENANCE_COLUMNS;

/** results.csv's header: the leading columns, the stages', the trailing ones. */
export function resultHeader(columns: readonly ResultColumn[], sampled: boolean): string[] {
  return [
    ...leadingColumns(sampled).map((c) => c.name),
    ...columns.map((c) => c.name),
    ...TRAILING_COLUMNS.map((c) => c.name),
  ];
}

/** The Parquet columns of results.parquet: the same names and order as results.csv's header. */
export function resultParquetColumns(columns: readonly ResultColumn[], sampled = false): ParquetColumn[] {
  return [
    ...leadingColumns(sampled),
    ...columns.map((c) => ({ name: c.name, kind: kindOfTypes(c.types) })),
    ...TRAILING_COLUMNS,
  ];
}

export const names = (columns: readonly ResultColumn[]) => columns.map((c) => c.name).join('\n');
export const kinds = (columns: readonly ResultColumn[]) => columns.map((c) => kindOfTypes(c.types)).join('\n');

/**
 * A row's values in file order (row, key, [stratum, weight,] each column, then run_id, run_session) and its CSV
 * record.
 */
export class RowShape {
  readonly width: number;
  readonly #lead: number;
  readonly #stage: string[];
  readonly #field: string[];
  /**
   * The last run id seen and its CSV text. Every line of a session carries the same id, each parsed into a
   * string of its own: the rows keep this one instead, so each line's copy dies young and the Parquet writer's
   * statistics and dictionary meet one object (compared by reference) rather than one string a row.
   */
  #runId: unknown = null;
  #runIdCsv = '';

  constructor(columns: readonly ResultColumn[], sampled: boolean) {
    this.#lead = sampled ? 4 : 2;
    this.width = columns.length + this.#lead + TRAILING_COLUMNS.length;
    this.#stage = columns.map((c) => c.stage);
    this.#field = columns.map((c) => c.field);
  }

  values(line: ResultLine): unknown[] {
    const values: unknown[] = new Array(this.width);
    values[0] = line.row;
    values[1] = line.key;
    if (this.#lead === 4) {
      values[2] = line.stratum ?? null;
      values[3] = line.weight ?? null;
    }
    const stages = line.stages as ResultStages;
    const lead = this.#lead;
    for (let i = 0; i < this.#stage.length; i += 1) {
      const v = stages[this.#stage[i]]?.[this.#field[i]];
      // Objects from the run (not parsed from the line) may hold what JSON writes otherwise (NaN, a Date).
      values[i + lead] = typeof v === 'object' || typeof v === 'number' ? asJsonValue(v) : v;
    }
    const end = lead + this.#stage.length;
    const id = line.run_id ?? null;
    if (id !== this.#runId) {
      this.#runId = id;
      this.#runIdCsv = csvField(excelSafe(id));
    }
    values[end] = this.#runId;
    values[end + 1] = line.run_session ?? null;
    return values;
  }

  /**
   * The row's CSV record, `\n` ended, as csv-stringify writes it with its defaults (../files/csv-line.ts), text
   * made safe for spreadsheets (../files/excel.ts): one string, no array of fields a row.
   */
  csv(values: readonly unknown[]): string {
    // The trailing columns are PROVENANCE_COLUMNS: run_id, then run_session.
    const id = this.width - 2;
    let out = String(values[0]);
    for (let i = 1; i < id; i += 1) out += `,${csvField(excelSafe(values[i]))}`;
    out += values[id] === this.#runId ? `,${this.#runIdCsv}` : `,${csvField(excelSafe(values[id]))}`;
    return `${out},${csvField(excelSafe(values[id + 1]))}\n`;
  }
}

/** CSV records gathered and written synchronously a few hundred at a time. */
export class CsvSink {
  readonly #fd: number;
  #pending = '';
  #records = 0;
  /** Bytes written so far (flush first): where the next record starts. */
  bytes = 0;
  /** CRC-32 of the bytes written since it was last set to 0 (a chunk's, kept with its record). */
  crc = 0;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** One record, `\n` ended (RowShape.csv). */
  add(record: string): void {
    this.#pending += record;
    this.#records += 1;
    if (this.#records >= 512) this.flush();
  }

  flush(): void {
    if (this.#records === 0) return;
    const buf = Buffer.from(this.#pending);
    this.crc = crc32(buf, this.crc);
    this.bytes += writeAll(this.#fd, buf);
    this.#pending = '';
    this.#records = 0;
  }
}

/** Returns the bytes written. */
export function writeAll(fd: number, data: string | Uint8Array): number {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
  return buf.length;
}

/** Rows of a segment, in row order, written together (plain data: it crosses threads). */
export interface SpooledChunk {
  readonly rows: number;
  readonly firstRow: number;
  readonly lastRow: number;
  /** The bytes of results.ndjson its lines are in: from the start of the first to the end of the last. */
  readonly from: number;
  readonly to: number;
  /** Its records in the segment's CSV file, bytes [csvStart, csvEnd). */
  readonly csvStart: number;
  readonly csvEnd: number;
  /** Its row group in the spool's Parquet body. */
  readonly groups?: GroupsWritten;
  /**
   * Kept in the spool's records (./records.ts) for the end after a kill: what its rows count (summary.json's
   * decisions), and CRC-32s of its CSV bytes and of its row group's bytes.
   */
  readonly counts?: unknown;
  readonly csvCrc?: number;
  readonly pqCrc?: number;
}

/** A range of results.ndjson the spool holds, under the columns it had then (plain data: it crosses threads). */
export interface SpooledSegment {
  /** Byte range of results.ndjson holding its rows. */
  readonly start: number;
  readonly end: number;
  readonly rows: number;
  /** Its first and last row numbers: its rows are written in row order (undefined: no row). */
  readonly firstRow?: number;
  readonly lastRow?: number;
  /** Rows it holds whose lines are in an earlier segment's bytes (held back when the columns changed). */
  readonly carried?: readonly number[];
  /**
   * A killed session's (./records.ts): rows of its chunks whose lines are past its `end`, as [row, start of the
   * line] pairs (their chunk's own lines, not rows inside it).
   */
  readonly trailing?: readonly number[];
  /** Where the first of those lines starts in results.ndjson. */
  readonly carriedFrom?: number;
  readonly names: string;
  readonly kinds: string;
  readonly csvPath?: string;
  /** Its rows, in row order; each chunk's rows come after the one before's. */
  readonly chunks: readonly SpooledChunk[];
  /** Whether it has row groups in the spool's Parquet body. */
  readonly parquet: boolean;
  /**
   * Its row groups are copied from this file (an earlier end's results.parquet, an earlier session's spool
   * body); undefined: the spool's body, continued by the end.
   */
  readonly parquetPath?: string;
  /**
   * An earlier session's, killed before its end (./records.ts): its lines were counted by chunk, a clean
   * chunk's counts stand for its rows and a dirty one's lines are visited.
   */
  readonly chunkCounts?: boolean;
}

/** The chunk being written (by the spool, and by the end's ResultsWriter). */
export interface OpenChunk {
  rows: number;
  firstRow: number;
  lastRow: number;
  from: number;
  to: number;
  csvStart: number;
}

/** A segment being written. */
interface Segment {
  readonly start: number;
  end: number;
  rows: number;
  firstRow?: number;
  lastRow?: number;
  carried?: number[];
  carriedFrom?: number;
  readonly chunks: SpooledChunk[];
  chunk?: OpenChunk;
  /** With a recorder: rows written whose lines may lie past the point the next record covers, as [row, start]. */
  recent?: number[];
  readonly names: string;
  readonly kinds: string;
  readonly shape: RowShape;
  readonly csvPath?: string;
  readonly csvFd?: number;
  readonly csv?: CsvSink;
  readonly pq?: ParquetGroupWriter;
  /** What the open chunk's rows count, for its record. */
  tally?: ChunkTally;
  closed: boolean;
}

export interface SpoolOptions {
  /** The folder's .state directory. */
  readonly stateDir: string;
  readonly csv: boolean;
  readonly parquet: boolean;
  readonly stages: readonly StageColumns[];
  /**
   * A column union holding at least the columns of the journal before the spool's first line (the spool adds
   * each line's fields to it, so it must be the spool's own: in a run, a copy of the run's union).
   */
  readonly union: ColumnUnion;
  /** A sampled run: `stratum,weight` after `row,key`. */
  readonly sampled?: boolean;
  /**
   * Records each chunk as it is written (./records.ts SpoolRecorder), so that the end after a kill uses them;
   * `tally` counts a chunk's rows for its record.
   */
  readonly recorder?: ChunkRecorder;
  readonly tally?: () => ChunkTally;
  /** Names this session's files (`spool-<id>-...`): a killed session's stay beside the next one's. */
  readonly id?: string;
  /**
   * Rows a chunk holds (default CHUNK_ROWS), rows and bytes held back to reorder (default REORDER_ROWS,
   * REORDER_BYTES): smaller in the tests that cross them, so that a few thousand rows show what tens of
   * thousands would.
   */
  readonly chunkRows?: number;
  readonly reorderRows?: number;
  readonly reorderBytes?: number;
}

/** What the spool counts over a chunk's rows (summary.json's decisions: stages/decisions.ts DecisionCounter). */
interface ChunkTally {
  add(stages: Readonly<Record<string, Readonly<Record<string, unknown>>>>): void;
  save(): unknown;
}

/** Where the spool lists its chunks as it writes them (./records.ts). */
export interface ChunkRecorder {
  open(seg: number, s: SegmentStart, csv: string | undefined): void;
  /**
   * `lo`: every line of the segment's bytes before it is in its chunks so far; `trailing`: the rows of those
   * chunks whose lines are past it, as [row, start of its line] pairs.
   */
  chunk(seg: number, chunk: SpooledChunk, lo: number, trailing: readonly number[]): void;
  close(seg: number, end: number): void;
  end(): void;
}

/** What a segment's record says when it opens. */
export interface SegmentStart {
  readonly start: number;
  readonly names: string;
  readonly kinds: string;
  readonly carried?: readonly number[];
  readonly carriedFrom?: number;
}

/** A name of the spool's files of one session: `spool-<id>.body`, `spool-<id>-<n>.csv`, `spool-<id>.records`. */
export const spoolFile = (id: string, what: 'body' | 'records' | number) =>
  typeof what === 'number' ? `spool-${id}-${what}.csv` : `spool-${id}.${what}`;
/** A session's id for its files' names. */
export const newSpoolId = () => randomBytes(4).toString('hex');
/** Files of a spool, any session's (and of the versions before sessions were named). */
const SPOOL_FILE =
  /^(spool-[0-9a-z]+(-\d+\.csv(\.tmp)?|\.body|\.records)|spool-\d+\.csv(\.tmp)?|results\.parquet\.body)$/;

/**
 * Rows the spool holds back to write them in row order: answers finish out of order by about the rows in
 * flight (a few hundred); a row later than this many others starts a new segment, and the end merges.
 */
const REORDER_ROWS = 4096;
/** ... and at most this many bytes of journal lines (a wide pipeline's lines are kilobytes each, parsed more). */
const REORDER_BYTES = 8 * 1024 * 1024;

/** A row held back, as its line: it is encoded when written, under the columns of the segment it goes to. */
interface Held {
  readonly row: number;
  readonly line: ResultLine;
  /** Its bytes [start, start + bytes) in results.ndjson. */
  readonly start: number;
  readonly bytes: number;
}

/** What the spool holds at the end of a session, for assembleResultFiles (plain data: it crosses threads). */
export interface SpoolContents {
  /** The session's id in its files' names (./records.ts: the end reads other sessions' records). */
  readonly id?: string;
  readonly segments: readonly SpooledSegment[];
  /** The Parquet body file and its length, its row groups written and no footer yet. */
  readonly body?: { readonly path: string; readonly bytes: number };
}

/**
 * Each results line is added as it reaches results.ndjson, with the byte range it holds there: a CSV body
 * (.state/spool-N.csv) and Parquet row groups (.state/results.parquet.body), under the columns known at that time
 * (the spool's own column union, ../journal/columns.ts, which sees the lines in journal order as the run's does).
 * A segment's rows are written in row order through a reorder buffer of REORDER_ROWS rows (answers finish out of
 * order by about the rows in flight). When the union changes in a way the files show (a new column, a Parquet
 * type that widens), or a row comes after a later row was written, a new segment starts. A segment is cut into
 * chunks of CHUNK_ROWS rows, each one row group and a byte range of the segment's CSV, with its first and last
 * row and the bytes of results.ndjson its lines came from. Memory: one row group, a few hundred CSV records and
 * the reorder buffer.
 */
export class ResultSpool {
  readonly #o: SpoolOptions;
  readonly #segments: Segment[] = [];
  readonly #body: ParquetBody | undefined;
  readonly #held = new MinHeap<Held>((a, b) => a.row < b.row);
  readonly #id: string;
  readonly #recorder: ChunkRecorder | undefined;
  readonly #chunkRows: number;
  readonly #reorderRows: number;
  readonly #reorderBytes: number;
  #heldBytes = 0;
  /** Where the last line added ends in results.ndjson. */
  #seen = 0;
  #current: Segment | undefined;

  /** `start`: where the first line it will be given starts in results.ndjson. */
  constructor(o: SpoolOptions, start = 0) {
    this.#o = o;
    this.#id = o.id ?? newSpoolId();
    this.#seen = start;
    // An earlier session's files are left for the end: killed before its own, it left them to be used.
    this.#body = o.parquet ? new ParquetBody(join(o.stateDir, spoolFile(this.#id, 'body'))) : undefined;
    this.#recorder = o.recorder;
    this.#chunkRows = o.chunkRows ?? CHUNK_ROWS;
    this.#reorderRows = o.reorderRows ?? REORDER_ROWS;
    this.#reorderBytes = o.reorderBytes ?? REORDER_BYTES;
  }

  #open(start: number): Segment {
    const columns = this.#o.union.columns(this.#o.stages);
    const csvName = this.#o.csv ? spoolFile(this.#id, this.#segments.length) : undefined;
    const csvPath = csvName ? join(this.#o.stateDir, csvName) : undefined;
    const csvFd = csvPath ? openSync(csvPath, 'w') : undefined;
    const seg: Segment = {
      start,
      end: start,
      rows: 0,
      chunks: [],
      names: names(columns),
      kinds: kinds(columns),
      shape: new RowShape(columns, this.#o.sampled === true),
      csvPath,
      csvFd,
      csv: csvFd === undefined ? undefined : new CsvSink(csvFd),
      pq: this.#body?.groups(resultParquetColumns(columns, this.#o.sampled === true), this.#chunkRows),
      closed: false,
    };
    this.#segments.push(seg);
    this.#recorder?.open(this.#segments.length - 1, seg, csvName);
    return seg;
  }

  /** The row held back longest in row order goes to the segment's files. */
  #write(seg: Segment, h: Held): void {
    this.#heldBytes -= h.bytes;
    const values = seg.shape.values(h.line);
    seg.csv?.add(seg.shape.csv(values));
    seg.pq?.push(values);
    if (this.#o.tally) (seg.tally ??= this.#o.tally()).add(h.line.stages);
    if (this.#recorder) (seg.recent ??= []).push(h.row, h.start);
    seg.rows += 1;
    seg.firstRow ??= h.row;
    seg.lastRow = h.row;
    const c = seg.chunk;
    if (!c) {
      // Its records start where the chunk before's end (each chunk's are flushed at its end).
      const csvStart = seg.chunks.at(-1)?.csvEnd ?? 0;
      seg.chunk = { rows: 1, firstRow: h.row, lastRow: h.row, from: h.start, to: h.start + h.bytes, csvStart };
    } else {
      c.rows += 1;
      c.lastRow = h.row;
      // A carried row's line is before the segment's bytes; the others are in journal order, give or take.
      c.from = Math.min(c.from, h.start);
      c.to = Math.max(c.to, h.start + h.bytes);
    }
    if (seg.chunk!.rows >= this.#chunkRows) this.#endChunk(seg);
  }

  /** The open chunk's records and row group written out, and the chunk listed. */
  #endChunk(seg: Segment): void {
    const c = seg.chunk;
    if (!c) return;
    seg.csv?.flush();
    const csvEnd = seg.csv?.bytes ?? 0;
    const groups = seg.pq?.take();
    const chunk: SpooledChunk = {
      rows: c.rows,
      firstRow: c.firstRow,
      lastRow: c.lastRow,
      from: c.from,
      to: c.to,
      csvStart: c.csvStart,
      csvEnd,
      ...(groups ? { groups } : {}),
    };
    seg.chunks.push(chunk);
    seg.chunk = undefined;
    if (this.#recorder) {
      // Every line of the segment's bytes before `lo` is in its chunks so far; the rows held are not.
      let lo = this.#seen;
      for (const h of this.#held.items()) if (h.start < lo) lo = h.start;
      // The point covered only moves on (a new line starts after every line held), so a row once before it stays.
      const trailing: number[] = [];
      const recent = seg.recent ?? [];
      for (let i = 0; i < recent.length; i += 2) if (recent[i + 1] >= lo) trailing.push(recent[i], recent[i + 1]);
      seg.recent = trailing;
      const recorded: SpooledChunk = {
        ...chunk,
        ...(seg.tally ? { counts: seg.tally.save() } : {}),
        ...(seg.csv ? { csvCrc: seg.csv.crc } : {}),
        ...(groups ? { pqCrc: this.#body!.crcOf(groups) } : {}),
      };
      this.#recorder.chunk(this.#segments.indexOf(seg), recorded, lo, trailing);
    }
    if (seg.csv) seg.csv.crc = 0;
    seg.tally = undefined;
  }

  /** `flush`: the rows held go to this segment; else they go on to the next one (its `carried`). */
  #close(seg: Segment, end: number, flush = true): void {
    if (flush) for (let h = this.#held.pop(); h; h = this.#held.pop()) this.#write(seg, h);
    this.#endChunk(seg);
    seg.end = end;
    seg.closed = true;
    if (seg.csvFd !== undefined) closeSync(seg.csvFd);
    this.#recorder?.close(this.#segments.indexOf(seg), end);
  }

  /**
   * One results line, in journal order, held in bytes [start, end) of results.ndjson. A segment's rows are
   * written in row order through a reorder buffer; a new segment starts when the line's fields change the
   * files' columns, or when its row comes after a later row was written already (the end then merges).
   */
  add(line: ResultLine, start: number, end: number): void {
    const changed = this.#o.union.observe(line.stages) !== undefined;
    let seg = this.#current;
    if (!seg) seg = this.#current = this.#open(start);
    else if (changed) {
      const columns = this.#o.union.columns(this.#o.stages);
      if (names(columns) !== seg.names || kinds(columns) !== seg.kinds) {
        // The rows held go on to the new segment, under its columns, so that the segments stay in row order
        // one after the other; the end knows them by `carried` (their lines are in this segment's bytes).
        this.#close(seg, start, false);
        seg = this.#current = this.#open(start);
        const held = this.#held.items();
        seg.carried = held.map((h) => h.row);
        if (held.length > 0) seg.carriedFrom = Math.min(...held.map((h) => h.start));
      }
    }
    if (seg.lastRow !== undefined && line.row < seg.lastRow) {
      this.#close(seg, start);
      seg = this.#current = this.#open(start);
    }
    this.#held.push({ row: line.row, line, start, bytes: end - start });
    this.#heldBytes += end - start;
    this.#seen = end;
    while (this.#held.size > this.#reorderRows || (this.#heldBytes > this.#reorderBytes && this.#held.size > 1))
      this.#write(seg, this.#held.pop()!);
    seg.end = end;
  }

  /**
   * Every line of a row below `floor` lies before byte `at` of results.ndjson and has been added (the run's
   * floor, src/pipeline/row-floor.ts, told with the file's length and read up to it here): the rows held below it
   * are written now, in row order. Only lines before `at`: a line after it is of a row that started after the
   * floor was taken. Without it a row waits behind REORDER_ROWS later ones, and each parsed line held that long
   * outlives the thread's young collections.
   */
  release(floor: number, at: number): void {
    const seg = this.#current;
    if (!seg) return;
    for (let h = this.#held.peek(); h && h.row < floor && h.start < at; h = this.#held.peek())
      this.#write(seg, this.#held.pop()!);
  }

  /**
   * After results.ndjson is closed (`size`: its length): every file flushed and closed, and what the spool
   * holds, for assembleResultFiles.
   */
  finish(size: number): SpoolContents {
    if (this.#current) this.#close(this.#current, size);
    this.#current = undefined;
    this.#recorder?.end();
    const segments = this.#segments.map(
      (s): SpooledSegment => ({
        start: s.start,
        end: s.end,
        rows: s.rows,
        names: s.names,
        kinds: s.kinds,
        ...(s.firstRow === undefined ? {} : { firstRow: s.firstRow, lastRow: s.lastRow }),
        ...(s.carried?.length ? { carried: s.carried, carriedFrom: s.carriedFrom } : {}),
        ...(s.csvPath ? { csvPath: s.csvPath } : {}),
        chunks: s.chunks,
        parquet: s.pq !== undefined,
      }),
    );
    return { id: this.#id, segments, ...(this.#body ? { body: this.#body.release() } : {}) };
  }

  /** After a failure: files closed (the caller removes them with `clean`). */
  abandon(): void {
    for (const s of this.#segments) {
      if (s.closed || s.csvFd === undefined) continue;
      s.closed = true;
      closeSync(s.csvFd);
    }
    this.#body?.abort();
    this.#recorder?.end();
  }

  /** Removes every session's spool files (after the end, which used what it could of them). */
  static clean(stateDir: string): void {
    if (existsSync(stateDir))
      for (const f of readdirSync(stateDir)) if (SPOOL_FILE.test(f)) rmSync(join(stateDir, f), { force: true });
  }
}
