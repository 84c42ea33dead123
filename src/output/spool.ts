/**
 * results.csv and results.parquet, written while the run goes, so that the end of a run does not read
 * results.ndjson again (issue 16: the wait after the last answer).
 *
 * Each results line is added to a spool as it reaches results.ndjson, with the byte range it holds there: a
 * CSV body (.state/spool-N.csv) and Parquet row groups (.state/results.parquet.body), under the columns
 * known at that time (the spool's own column union, src/output/columns.ts, which sees the lines in journal
 * order as the run's does). When the union changes in a way the files show (a new column, or a Parquet type
 * that widens), the spool starts a new segment. At the end the files are assembled in journal order: a
 * segment whose columns are the final ones is used as it is (its CSV bytes copied, its row groups listed in
 * the footer); any other range of results.ndjson (rows of earlier sessions, or a segment written before a
 * column appeared) is read again from the journal, which stays the truth. In a run the union settles within
 * the first rows, so the end copies bytes and writes a footer; a resumed run reads the rows of its earlier
 * sessions once.
 *
 * During a run the spool lives in a worker thread that follows results.ndjson (./spool-thread.ts): encoding
 * (Parquet above all: a row group of 10,000 rows took hundreds of ms at once) costs the run's event loop
 * nothing. The spool belongs to one session: a crash leaves files that the next session removes. Memory:
 * one row group and a few hundred CSV records.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { csvRecords } from './csv-line.js';
import { asJsonValue, type ColumnUnion, type ResultColumn, type ResultStages, type StageColumns } from './columns.js';
import { excelSafe } from './excel.js';
import { readNdjsonBatches } from './ndjson-file.js';
import { kindOfTypes, type ParquetColumn } from './parquet/schema.js';
import { ParquetBody, type GroupsWritten, type ParquetGroupWriter } from './parquet/table-writer.js';

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
export function leadingColumns(sampled: boolean): ParquetColumn[] {
  const lead: ParquetColumn[] = [{ name: 'row', kind: 'int64' }, { name: 'key', kind: 'string' }];
  return sampled ? [...lead, { name: 'stratum', kind: 'string' }, { name: 'weight', kind: 'double' }] : lead;
}

/** The Parquet columns of results.parquet: the same names and order as results.csv's header. */
export function resultParquetColumns(columns: readonly ResultColumn[], sampled = false): ParquetColumn[] {
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
export interface SpooledSegment {
  /** Byte range of results.ndjson holding its rows. */
  readonly start: number;
  readonly end: number;
  readonly rows: number;
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
      start, end: start, rows: 0, names: names(columns), kinds: kinds(columns), shape: new RowShape(columns, this.#o.sampled === true),
      csvPath, csvFd, csv: csvFd === undefined ? undefined : new CsvSink(csvFd),
      pq: this.#body?.groups(resultParquetColumns(columns, this.#o.sampled === true)), closed: false,
    };
    this.#segments.push(seg);
    return seg;
  }

  #close(seg: Segment, end: number): void {
    seg.end = end;
    seg.csv?.flush();
    seg.closed = true;
    if (seg.csvFd !== undefined) closeSync(seg.csvFd);
    seg.pq?.flush();
  }

  /**
   * One results line, in journal order, held in bytes [start, end) of results.ndjson. A new segment starts
   * when the line's fields change the files' columns.
   */
  add(line: ResultLine, start: number, end: number): void {
    const changed = this.#o.union.observe(line.stages) !== undefined;
    let seg = this.#current;
    if (!seg) seg = this.#current = this.#open(start);
    else if (changed) {
      const columns = this.#o.union.columns(this.#o.stages);
      if (names(columns) !== seg.names || kinds(columns) !== seg.kinds) {
        this.#close(seg, start);
        seg = this.#current = this.#open(start);
      }
    }
    const values = seg.shape.values(line);
    seg.csv?.add(seg.shape.record(values));
    seg.pq?.push(values);
    seg.rows += 1;
    seg.end = end;
  }

  /**
   * After results.ndjson is closed (`size`: its length): every file flushed and closed, and what the spool
   * holds, for assembleResultFiles.
   */
  finish(size: number): SpoolContents {
    if (this.#current) this.#close(this.#current, size);
    this.#current = undefined;
    const segments = this.#segments.map((s): SpooledSegment => ({
      start: s.start, end: s.end, rows: s.rows, names: s.names, kinds: s.kinds,
      ...(s.csvPath ? { csvPath: s.csvPath } : {}), ...(s.pq ? { groups: s.pq.written() } : {}),
    }));
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
    if (existsSync(stateDir)) for (const f of readdirSync(stateDir)) if (/^spool-\d+\.csv(\.tmp)?$/.test(f) || f === BODY) rmSync(join(stateDir, f), { force: true });
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

/**
 * results.csv and/or results.parquet: the spooled segments that match the final columns as they are, the
 * rest read from results.ndjson, all in journal order. Both files are written under temporary names and
 * renamed when complete.
 */
export async function assembleResultFiles(o: AssembleOptions): Promise<{ rows: number; columns: number }> {
  const finalNames = names(o.columns);
  const finalKinds = kinds(o.columns);
  const sampled = o.sampled === true;
  const shape = new RowShape(o.columns, sampled);
  const pqColumns = resultParquetColumns(o.columns, sampled);
  const segments = o.spool?.segments ?? [];
  const csvTmp = o.files.csv ? `${o.files.csv}.tmp` : undefined;
  const csvFd = csvTmp ? openSync(csvTmp, 'w') : undefined;
  const csv = csvFd === undefined ? undefined : new CsvSink(csvFd);
  const body = o.files.parquet ? (o.spool?.body ? ParquetBody.append(o.spool.body.path, o.spool.body.bytes) : new ParquetBody(`${o.files.parquet}.tmp`)) : undefined;
  const parts: GroupsWritten[] = [];
  let rows = 0;

  const readRange = async (start: number, end: number, toCsv: boolean, toParquet: boolean, visit: boolean): Promise<number> => {
    const pq = toParquet ? body!.groups(pqColumns) : undefined;
    let n = 0;
    for await (const batch of readNdjsonBatches<ResultLine>(o.resultsPath, { start, end })) {
      for (const line of batch) {
        if (!line?.stages) continue;
        if (visit) o.visit?.(line);
        const values = shape.values(line);
        if (toCsv) csv!.add(shape.record(values));
        pq?.push(values);
        n += 1;
      }
    }
    if (pq) {
      pq.flush();
      parts.push(pq.written());
    }
    return n;
  };

  try {
    csv?.add([...leadingColumns(sampled).map((c) => c.name), ...o.columns.map((c) => c.name)]);
    // A range read from the journal: its lines before `visitBefore` are shown to `visit`, the rest not.
    const fromJournal = async (start: number, end: number): Promise<number> => {
      const cut = Math.min(Math.max(o.visitBefore ?? end, start), end);
      let n = 0;
      if (cut > start) n += await readRange(start, cut, !!csv, !!body, true);
      if (end > cut) n += await readRange(cut, end, !!csv, !!body, false);
      return n;
    };
    let pos = 0;
    for (const seg of segments) {
      if (seg.start > pos) rows += await fromJournal(pos, seg.start);
      const csvFits = seg.names === finalNames && seg.csvPath !== undefined;
      const pqFits = seg.names === finalNames && seg.kinds === finalKinds && seg.groups !== undefined;
      if ((csv && !csvFits) || (body && !pqFits)) await readRange(seg.start, seg.end, !!csv && !csvFits, !!body && !pqFits, false);
      if (csv && csvFits) {
        csv.flush();
        appendFileTo(csvFd!, seg.csvPath!);
      }
      if (body && pqFits) parts.push(seg.groups!);
      rows += seg.rows;
      pos = seg.end;
    }
    if (o.size > pos) rows += await fromJournal(pos, o.size);
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
