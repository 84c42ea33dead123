/**
 * results.csv and results.parquet being written at the end of a run (./assemble.ts), in row order: rows
 * encoded one by one, and chunks used as they are (CSV bytes copied; row groups listed, or copied from
 * another file). Both under temporary names, renamed when complete. It keeps the chunks the files end up
 * holding, for their index (./results-index.ts): encoded rows are cut into chunks of CHUNK_ROWS as the
 * spool's are, each with the journal bytes its lines came from.
 */
import { closeSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import type { ResultColumn } from '../journal/columns.js';
import type { ParquetColumn } from '../files/parquet/schema.js';
import { copyBuffer, ParquetBody, type GroupsWritten, type ParquetGroupWriter } from '../files/parquet/table-writer.js';
import type { SortedLine } from './row-sort.js';
import { CHUNK_ROWS } from './chunk-rows.js';
import { csvRecords } from '../files/csv-line.js';
import {
  CsvSink,
  resultHeader,
  RowShape,
  type OpenChunk,
  writeAll,
  type ResultFiles,
  type ResultLine,
  type SpooledChunk,
} from './spool.js';

/** Bytes [start, end) of the file at `path` appended to `fd`; returns how many. */
function copyRange(fd: number, path: string, start: number, end: number): number {
  const src = openSync(path, 'r');
  const buf = copyBuffer();
  try {
    for (let at = start; at < end; ) {
      const n = readSync(src, buf, 0, Math.min(buf.length, end - at), at);
      if (n === 0) throw new Error(`${path} ends at byte ${at}, before ${end}`);
      writeAll(fd, buf.subarray(0, n));
      at += n;
    }
  } finally {
    closeSync(src);
  }
  return end - start;
}

export class ResultsWriter {
  readonly #files: ResultFiles;
  readonly #shape: RowShape;
  readonly #pqColumns: readonly ParquetColumn[];
  readonly #csvTmp: string | undefined;
  readonly #csvFd: number | undefined;
  readonly #csv: CsvSink | undefined;
  readonly #body: ParquetBody | undefined;
  readonly #pq: ParquetGroupWriter | undefined;
  readonly #parts: GroupsWritten[] = [];
  readonly #chunks: SpooledChunk[] = [];
  #open: OpenChunk | undefined;
  #closed = false;
  readonly #chunkRows: number;
  rows = 0;

  /** `body`: a spool's Parquet body to continue (some of its row groups are used), else a new file. */
  constructor(o: {
    readonly files: ResultFiles;
    readonly columns: readonly ResultColumn[];
    readonly pqColumns: readonly ParquetColumn[];
    readonly sampled: boolean;
    readonly body?: { readonly path: string; readonly bytes: number };
    /** Rows a chunk holds (default CHUNK_ROWS), as the spool was told. */
    readonly chunkRows?: number;
  }) {
    this.#files = o.files;
    this.#chunkRows = o.chunkRows ?? CHUNK_ROWS;
    this.#shape = new RowShape(o.columns, o.sampled);
    this.#pqColumns = o.pqColumns;
    this.#csvTmp = o.files.csv ? `${o.files.csv}.tmp` : undefined;
    this.#csvFd = this.#csvTmp ? openSync(this.#csvTmp, 'w') : undefined;
    this.#csv = this.#csvFd === undefined ? undefined : new CsvSink(this.#csvFd);
    try {
      this.#body = o.files.parquet
        ? o.body
          ? ParquetBody.append(o.body.path, o.body.bytes)
          : new ParquetBody(`${o.files.parquet}.tmp`)
        : undefined;
    } catch (err) {
      this.abort();
      throw err;
    }
    this.#pq = this.#body?.groups(o.pqColumns, this.#chunkRows);
    this.#csv?.add(csvRecords([resultHeader(o.columns, o.sampled)]));
    this.#csv?.flush();
  }

  /** One line of the journal, parsed and encoded (a line that does not parse, or has no stages, is left out). */
  encode(l: SortedLine, visit?: (line: ResultLine) => void): void {
    let line: ResultLine | undefined;
    try {
      line = JSON.parse(l.text) as ResultLine;
    } catch {
      return; // as by every reader of the journal
    }
    if (!line?.stages) return;
    if (l.visit) visit?.(line);
    const values = this.#shape.values(line);
    this.#csv?.add(this.#shape.csv(values));
    this.#pq?.push(values);
    this.rows += 1;
    const c = this.#open;
    if (!c) {
      const csvStart = this.#csv?.bytes ?? 0;
      this.#open = { rows: 1, firstRow: l.row, lastRow: l.row, from: l.at, to: l.at + l.bytes, csvStart };
    } else {
      c.rows += 1;
      c.lastRow = l.row;
      c.from = Math.min(c.from, l.at);
      c.to = Math.max(c.to, l.at + l.bytes);
    }
    if (this.#open!.rows >= this.#chunkRows) this.#endChunk();
  }

  /** The rows encoded since the last chunk, as a chunk (a row group of their own). */
  #endChunk(): void {
    const c = this.#open;
    if (!c) return;
    this.#open = undefined;
    this.#csv?.flush();
    const groups = this.#pq?.take();
    if (groups) this.#parts.push(groups);
    this.#chunks.push({ ...c, csvEnd: this.#csv?.bytes ?? 0, ...(groups ? { groups } : {}) });
  }

  /**
   * A chunk used as it is: its CSV records copied from `csvPath`, its row groups listed (they are in the
   * body already) or, with `parquetFrom`, copied from that file.
   */
  copy(chunk: SpooledChunk, csvPath: string | undefined, parquetFrom?: string): void {
    this.#endChunk();
    const csvStart = this.#csv?.bytes ?? 0;
    if (this.#csv) {
      this.#csv.flush();
      this.#csv.bytes += copyRange(this.#csvFd!, csvPath!, chunk.csvStart, chunk.csvEnd);
    }
    let groups: GroupsWritten | undefined;
    if (this.#body) {
      groups = parquetFrom ? this.#body.copyGroups(parquetFrom, chunk.groups!) : chunk.groups!;
      this.#parts.push(groups);
    }
    // What a record kept for its own end (counts, checksums) is not the new files'.
    const { counts: _, csvCrc: __, pqCrc: ___, groups: ____, ...kept } = chunk;
    this.#chunks.push({ ...kept, csvStart, csvEnd: this.#csv?.bytes ?? 0, ...(groups ? { groups } : {}) });
    this.rows += chunk.rows;
  }

  /** Both files complete, still under their temporary names; the chunks they hold. */
  complete(): readonly SpooledChunk[] {
    this.#endChunk();
    if (this.#body) {
      // A file of no row: a footer with no row group.
      if (this.#parts.length === 0) this.#parts.push(this.#pq!.take());
      this.#body.finish(this.#pqColumns, this.#parts);
    }
    if (this.#csv) {
      this.#csv.flush();
      closeSync(this.#csvFd!);
    }
    this.#closed = true;
    return this.#chunks;
  }

  /** After `complete`: the files renamed to their names. */
  rename(): void {
    if (this.#body) renameSync(this.#body.path, this.#files.parquet!);
    if (this.#csvTmp) renameSync(this.#csvTmp, this.#files.csv!);
  }

  /** Leaves no temporary file behind. */
  abort(): void {
    if (!this.#closed) {
      this.#closed = true;
      this.#body?.abort();
      if (this.#csvFd !== undefined)
        try {
          closeSync(this.#csvFd);
        } catch {
          /* already closed */
        }
    } else if (this.#body) rmSync(this.#body.path, { force: true });
    if (this.#csvTmp) rmSync(this.#csvTmp, { force: true });
  }
}
