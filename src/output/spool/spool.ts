/**
 * results.csv and results.parquet, written while the run goes, so that the end of a run does not read
 * results.ndjson again (issue 16: the wait after the last answer).
 *
 * Each results line is added to a spool as it reaches results.ndjson, with the byte range it holds there: a
 * CSV body (.state/spool-N.csv) and Parquet row groups (.state/results.parquet.body), under the columns
 * known at that time (the spool's own column union, src/output/journal/columns.ts, which sees the lines in journal
 * order as the run's does). A segment's rows are written in row order (the input's, issue 31) through a
 * reorder buffer of REORDER_ROWS rows: answers finish out of order by about the rows in flight. When the
 * union changes in a way the files show (a new column, or a Parquet type that widens), or a row comes after
 * a later row was written, the spool starts a new segment. At the end (assembleResultFiles), when the
 * segments with the final columns and the rest of the journal follow one another in row order (a run of one
 * session), the segments are used as they are (CSV bytes copied, row groups listed in the footer) and the
 * rest (the first rows, before the spool's thread started) read again from the journal, which stays the
 * truth; otherwise (a resumed run, --retry-errors) every row is read from the journal in row order, by a
 * merge of sorted runs in bounded memory (./row-sort.ts).
 *
 * During a run the spool lives in a worker thread that follows results.ndjson (./thread.ts): encoding
 * (Parquet above all: a row group of 10,000 rows took hundreds of ms at once) costs the run's event loop
 * nothing. The spool belongs to one session: a crash leaves files that the next session removes. Memory:
 * one row group, a few hundred CSV records and the reorder buffer.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { csvRecords } from '../files/csv-line.js';
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
import { MinHeap } from './min-heap.js';
import { linesByRow, sortInMemory, SORT_CHUNK_BYTES, type JournalRange, type SortedLine } from './row-sort.js';

export interface ResultLine {
  row: number;
  key: unknown;
  /** A sampled run's (`run --sample`): the row's stratum and design weight. */
  stratum?: unknown;
  weight?: unknown;
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

/** The Parquet columns of results.parquet: the same names and order as results.csv's header. */
function resultParquetColumns(columns: readonly ResultColumn[], sampled = false): ParquetColumn[] {
  return [...leadingColumns(sampled), ...columns.map((c) => ({ name: c.name, kind: kindOfTypes(c.types) }))];
}

const names = (columns: readonly ResultColumn[]) => columns.map((c) => c.name).join('\n');
const kinds = (columns: readonly ResultColumn[]) => columns.map((c) => kindOfTypes(c.types)).join('\n');

/** A row's values in file order (row, key, [stratum, weight,] then each column) and its CSV record. */
class RowShape {
  readonly width: number;
  readonly #lead: number;
  readonly #stage: string[];
  readonly #field: string[];

  constructor(columns: readonly ResultColumn[], sampled: boolean) {
    this.#lead = sampled ? 4 : 2;
    this.width = columns.length + this.#lead;
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
    return values;
  }

  record(values: readonly unknown[]): string[] {
    const record: string[] = new Array(this.width);
    record[0] = String(values[0]);
    for (let i = 1; i < this.width; i += 1) record[i] = excelSafe(values[i]);
    return record;
  }
}

/** CSV records gathered and written synchronously a few hundred at a time (csv-stringify's quoting). */
class CsvSink {
  readonly #fd: number;
  #pending: string[][] = [];

  constructor(fd: number) {
    this.#fd = fd;
  }

  add(record: string[]): void {
    this.#pending.push(record);
    if (this.#pending.length >= 512) this.flush();
  }

  flush(): void {
    if (this.#pending.length === 0) return;
    writeAll(this.#fd, csvRecords(this.#pending));
    this.#pending = [];
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data) : data;
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
}

function appendFileTo(fd: number, path: string): void {
  const src = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) writeAll(fd, buf.subarray(0, n));
  } finally {
    closeSync(src);
  }
}

/** A range of results.ndjson the spool holds, under the columns it had then (plain data: it crosses threads). */
interface SpooledSegment {
  /** Byte range of results.ndjson holding its rows. */
  readonly start: number;
  readonly end: number;
  readonly rows: number;
  /** Its first and last row numbers: its rows are written in row order (undefined: no row). */
  readonly firstRow?: number;
  readonly lastRow?: number;
  /** Rows it holds whose lines are in an earlier segment's bytes (held back when the columns changed). */
  readonly carried?: readonly number[];
  readonly names: string;
  readonly kinds: string;
  readonly csvPath?: string;
  /** Its row groups in the spool's Parquet body. */
  readonly groups?: GroupsWritten;
}

/** A segment being written. */
interface Segment {
  readonly start: number;
  end: number;
  rows: number;
  firstRow?: number;
  lastRow?: number;
  carried?: number[];
  readonly names: string;
  readonly kinds: string;
  readonly shape: RowShape;
  readonly csvPath?: string;
  readonly csvFd?: number;
  readonly csv?: CsvSink;
  readonly pq?: ParquetGroupWriter;
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
}

const BODY = 'results.parquet.body';

/**
 * Rows the spool holds back to write them in row order: answers finish out of order by about the rows in
 * flight (a few hundred); a row later than this many others starts a new segment, and the end merges.
 */
export const REORDER_ROWS = 4096;
/** ... and at most this many bytes of journal lines (a wide pipeline's lines are kilobytes each, parsed more). */
export const REORDER_BYTES = 8 * 1024 * 1024;

/** A row held back, as its line: it is encoded when written, under the columns of the segment it goes to. */
interface Held {
  readonly row: number;
  readonly line: ResultLine;
  readonly bytes: number;
}

/** What the spool holds at the end of a session, for assembleResultFiles (plain data: it crosses threads). */
export interface SpoolContents {
  readonly segments: readonly SpooledSegment[];
  /** The Parquet body file and its length, its row groups written and no footer yet. */
  readonly body?: { readonly path: string; readonly bytes: number };
}

export class ResultSpool {
  readonly #o: SpoolOptions;
  readonly #segments: Segment[] = [];
  readonly #body: ParquetBody | undefined;
  readonly #held = new MinHeap<Held>((a, b) => a.row < b.row);
  #heldBytes = 0;
  #current: Segment | undefined;

  constructor(o: SpoolOptions) {
    this.#o = o;
    ResultSpool.clean(o.stateDir);
    this.#body = o.parquet ? new ParquetBody(join(o.stateDir, BODY)) : undefined;
  }

  #open(start: number): Segment {
    const columns = this.#o.union.columns(this.#o.stages);
    const csvPath = this.#o.csv ? join(this.#o.stateDir, `spool-${this.#segments.length}.csv`) : undefined;
    const csvFd = csvPath ? openSync(csvPath, 'w') : undefined;
    const seg: Segment = {
      start,
      end: start,
      rows: 0,
      names: names(columns),
      kinds: kinds(columns),
      shape: new RowShape(columns, this.#o.sampled === true),
      csvPath,
      csvFd,
      csv: csvFd === undefined ? undefined : new CsvSink(csvFd),
      pq: this.#body?.groups(resultParquetColumns(columns, this.#o.sampled === true)),
      closed: false,
    };
    this.#segments.push(seg);
    return seg;
  }

  /** The row held back longest in row order goes to the segment's files. */
  #write(seg: Segment, h: Held): void {
    this.#heldBytes -= h.bytes;
    const values = seg.shape.values(h.line);
    seg.csv?.add(seg.shape.record(values));
    seg.pq?.push(values);
    seg.rows += 1;
    seg.firstRow ??= h.row;
    seg.lastRow = h.row;
  }

  /** `flush`: the rows held go to this segment; else they go on to the next one (its `carried`). */
  #close(seg: Segment, end: number, flush = true): void {
    if (flush) for (let h = this.#held.pop(); h; h = this.#held.pop()) this.#write(seg, h);
    seg.end = end;
    seg.csv?.flush();
    seg.closed = true;
    if (seg.csvFd !== undefined) closeSync(seg.csvFd);
    seg.pq?.flush();
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
        seg.carried = this.#held.items().map((h) => h.row);
      }
    }
    if (seg.lastRow !== undefined && line.row < seg.lastRow) {
      this.#close(seg, start);
      seg = this.#current = this.#open(start);
    }
    this.#held.push({ row: line.row, line, bytes: end - start });
    this.#heldBytes += end - start;
    while (this.#held.size > REORDER_ROWS || (this.#heldBytes > REORDER_BYTES && this.#held.size > 1))
      this.#write(seg, this.#held.pop()!);
    seg.end = end;
  }

  /**
   * After results.ndjson is closed (`size`: its length): every file flushed and closed, and what the spool
   * holds, for assembleResultFiles.
   */
  finish(size: number): SpoolContents {
    if (this.#current) this.#close(this.#current, size);
    this.#current = undefined;
    const segments = this.#segments.map(
      (s): SpooledSegment => ({
        start: s.start,
        end: s.end,
        rows: s.rows,
        names: s.names,
        kinds: s.kinds,
        ...(s.firstRow === undefined ? {} : { firstRow: s.firstRow, lastRow: s.lastRow }),
        ...(s.carried?.length ? { carried: s.carried } : {}),
        ...(s.csvPath ? { csvPath: s.csvPath } : {}),
        ...(s.pq ? { groups: s.pq.written() } : {}),
      }),
    );
    return { segments, ...(this.#body ? { body: this.#body.release() } : {}) };
  }

  /** After a failure: files closed (the caller removes them with `clean`). */
  abandon(): void {
    for (const s of this.#segments) {
      if (s.closed || s.csvFd === undefined) continue;
      s.closed = true;
      closeSync(s.csvFd);
    }
    this.#body?.abort();
  }

  /** Removes the spool's files (after assembling, or when the run ends without it). */
  static clean(stateDir: string): void {
    // Left by an earlier session (the spool is one session's): its rows are read from the journal instead.
    if (existsSync(stateDir))
      for (const f of readdirSync(stateDir))
        if (/^spool-\d+\.csv(\.tmp)?$/.test(f) || f === BODY) rmSync(join(stateDir, f), { force: true });
  }
}

export interface AssembleOptions {
  readonly resultsPath: string;
  /** Length of results.ndjson (read up to there). */
  readonly size: number;
  readonly files: ResultFiles;
  /** The final columns (the union of the whole folder). */
  readonly columns: readonly ResultColumn[];
  /** What this session spooled; undefined: every row is read from the journal. */
  readonly spool?: SpoolContents;
  /** Sees result lines read from the journal that start before `visitBefore` (default: all of them). */
  readonly visit?: (line: ResultLine) => void;
  /**
   * Byte offset of the first line `visit` must not see: where this session's lines begin (the caller saw
   * those as they were written, whether or not the spool held them).
   */
  readonly visitBefore?: number;
  /** Folder for temporary files when there is no spool. */
  readonly tmpDir?: string;
  /** A sampled run: `stratum,weight` after `row,key` (the spool was told the same). */
  readonly sampled?: boolean;
}

/** A part of the results files, in journal order: a spooled segment used as it is, or lines of the journal. */
type Piece = { readonly seg: SpooledSegment } | { readonly ranges: readonly JournalRange[]; lines?: SortedLine[] };

/**
 * results.csv and/or results.parquet, in row order (the input's), written under temporary names and renamed
 * when complete. When the spooled segments that have the final columns and the rest of the journal (read
 * into memory and sorted) follow one another in row order, as in a run of one session, the segments are
 * used as they are (CSV bytes copied, row groups listed) and only the rest is encoded. Otherwise (a resumed
 * run, --retry-errors, a merge, a row that came later than REORDER_ROWS others) every line is read from the
 * journal in row order (./row-sort.ts: sorted runs merged, memory bounded) and encoded.
 */
export async function assembleResultFiles(o: AssembleOptions): Promise<{ rows: number; columns: number }> {
  const finalNames = names(o.columns);
  const finalKinds = kinds(o.columns);
  const sampled = o.sampled === true;
  const shape = new RowShape(o.columns, sampled);
  const pqColumns = resultParquetColumns(o.columns, sampled);
  const cut = o.visitBefore ?? o.size;
  // A journal range's lines before `cut` are shown to `visit` (rows of earlier sessions), the rest not.
  const split = (start: number, end: number, visit: boolean): JournalRange[] => {
    const at = visit ? Math.min(Math.max(cut, start), end) : start;
    return [
      { start, end: at, visit: true },
      { start: at, end, visit: false },
    ].filter((r) => r.end > r.start);
  };
  const pieces: Piece[] = [];
  let pos = 0;
  for (const seg of o.spool?.segments ?? []) {
    if (seg.start > pos) pieces.push({ ranges: split(pos, seg.start, true) });
    const fits =
      (!o.files.csv || (seg.names === finalNames && seg.csvPath !== undefined)) &&
      (!o.files.parquet || (seg.names === finalNames && seg.kinds === finalKinds && seg.groups !== undefined));
    if (fits && seg.rows > 0) pieces.push({ seg });
    else if (seg.end > seg.start) pieces.push({ ranges: split(seg.start, seg.end, false) });
    pos = seg.end;
  }
  if (o.size > pos) pieces.push({ ranges: split(pos, o.size, true) });
  // Rows a segment used as it is holds, whose lines are in the bytes of an earlier piece.
  const carried = new Set(pieces.flatMap((p) => ('seg' in p ? (p.seg.carried ?? []) : [])));

  let ordered =
    pieces.reduce((n, p) => n + ('ranges' in p ? p.ranges.reduce((m, r) => m + r.end - r.start, 0) : 0), 0) <=
    SORT_CHUNK_BYTES;
  if (ordered) {
    let last = -Infinity;
    for (const p of pieces) {
      if ('ranges' in p) p.lines = (await sortInMemory(o.resultsPath, p.ranges)).filter((l) => !carried.has(l.row));
      const [first, end] =
        'seg' in p ? [p.seg.firstRow, p.seg.lastRow] : [p.lines![0]?.row, p.lines![p.lines!.length - 1]?.row];
      if (first === undefined || end === undefined) continue;
      if (first < last) ordered = false;
      last = end;
    }
  }

  const csvTmp = o.files.csv ? `${o.files.csv}.tmp` : undefined;
  const csvFd = csvTmp ? openSync(csvTmp, 'w') : undefined;
  const csv = csvFd === undefined ? undefined : new CsvSink(csvFd);
  const spoolBody = ordered ? o.spool?.body : undefined;
  const body = o.files.parquet
    ? spoolBody
      ? ParquetBody.append(spoolBody.path, spoolBody.bytes)
      : new ParquetBody(`${o.files.parquet}.tmp`)
    : undefined;
  const parts: GroupsWritten[] = [];
  let rows = 0;

  const encode = (lines: readonly SortedLine[], pq: ParquetGroupWriter | undefined): number => {
    let n = 0;
    for (const l of lines) {
      let line: ResultLine | undefined;
      try {
        line = JSON.parse(l.text) as ResultLine;
      } catch {
        continue; // a line that does not parse is left out, as by every reader of the journal
      }
      if (!line?.stages) continue;
      if (l.visit) o.visit?.(line);
      const values = shape.values(line);
      csv?.add(shape.record(values));
      pq?.push(values);
      n += 1;
    }
    return n;
  };
  const groupsOf = (pq: ParquetGroupWriter | undefined) => {
    if (!pq) return;
    pq.flush();
    parts.push(pq.written());
  };

  try {
    csv?.add([...leadingColumns(sampled).map((c) => c.name), ...o.columns.map((c) => c.name)]);
    if (ordered) {
      for (const p of pieces) {
        if ('seg' in p) {
          if (csv) {
            csv.flush();
            appendFileTo(csvFd!, p.seg.csvPath!);
          }
          if (body) parts.push(p.seg.groups!);
          rows += p.seg.rows;
        } else {
          const pq = body?.groups(pqColumns);
          rows += encode(p.lines!, pq);
          groupsOf(pq);
        }
      }
    } else {
      const pq = body?.groups(pqColumns);
      for await (const batch of linesByRow(o.resultsPath, split(0, o.size, true), o.tmpDir ?? dirname(o.resultsPath)))
        rows += encode(batch, pq);
      groupsOf(pq);
    }
    if (body) {
      body.finish(pqColumns, parts);
      renameSync(body.path, o.files.parquet!);
    }
    if (csv) {
      csv.flush();
      closeSync(csvFd!);
      renameSync(csvTmp!, o.files.csv!);
    }
  } catch (err) {
    body?.abort();
    if (csvFd !== undefined) {
      try {
        closeSync(csvFd);
      } catch {
        /* already closed */
      }
      rmSync(csvTmp!, { force: true });
    }
    throw err;
  }
  return { rows, columns: o.columns.length + leadingColumns(sampled).length };
}
