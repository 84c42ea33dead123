/**
 * Parquet files written a row group at a time, with memory bounded by one row group whatever the row
 * count: rows are pushed as value arrays in column order, buffered per column, and each full group is
 * encoded (hyparquet-writer's ParquetWriter, Snappy) and handed to the kernel at once.
 *
 * A ParquetBody is the file being built: row groups of one or more group writers go into it as they fill,
 * and `finish` writes the footer listing the groups in the order given (a footer, not the physical order,
 * says which rows come first). That lets the results file be spooled while the run goes and completed at
 * the end with row groups added after it (src/output/spool/spool.ts). Bytes no group refers to (the 4-byte
 * header each extra writer writes) are ignored by every reader.
 */
import { closeSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { ByteWriter, ParquetWriter, type Writer } from 'hyparquet-writer';
import { convert, schemaOf, type ParquetColumn } from './schema.js';

/** Rows per row group: big enough for good compression and fast scans, small enough to hold in memory. */
const ROW_GROUP_ROWS = 10_000;
/** Bytes gathered before a write() to the file. */
const FLUSH_BYTES = 1 << 20;

/**
 * hyparquet-writer's ByteWriter whose bytes go to a file descriptor instead of a growing buffer; `at`: the
 * file's length so far (the offsets the writer records are from the start of the file).
 */
function fdWriter(fd: number, at = 0): Writer & { flush(): void } {
  const w = new ByteWriter(FLUSH_BYTES * 2) as unknown as Writer & { index: number };
  w.offset = at;
  const drain = () => {
    if (w.index === 0) return;
    const bytes = new Uint8Array(w.buffer, 0, w.index);
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
    w.index = 0;
  };
  const grow = ByteWriter.prototype.ensure;
  w.ensure = function ensure(size: number) {
    if (w.index > FLUSH_BYTES) drain();
    grow.call(w, size);
  };
  w.flush = drain;
  w.finish = drain;
  return Object.assign(w, { flush: drain });
}

let copyBuf: Buffer | undefined;
/**
 * The one buffer row groups are copied through: a buffer a copy (a chunk of an end: a hundred a million rows)
 * is freed only by a collection, which V8 makes late for memory outside its heap, so RSS grew with the rows.
 */
export function copyBuffer(): Buffer {
  copyBuf ??= Buffer.allocUnsafe(1 << 20);
  return copyBuf;
}

/**
 * CRC-32 of the bytes of `part`'s row groups in the file open as `fd` (undefined: the file ends before them),
 * read through `buf`.
 */
export function groupsCrc(fd: number, part: GroupsWritten, buf: Buffer): number | undefined {
  let crc = 0;
  for (const g of part.groups as RowGroupOffsets[]) {
    const start = Number(g.columns[0].file_offset);
    for (let at = start, end = start + Number(g.total_compressed_size); at < end; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, end - at), at);
      if (n === 0) return undefined;
      crc = crc32(buf.subarray(0, n), crc);
      at += n;
    }
  }
  return crc;
}

/** What of a row group's column chunks says where their bytes are (hyparquet-writer's RowGroup). */
interface RowGroupOffsets {
  total_compressed_size: bigint;
  columns: {
    file_offset: bigint;
    meta_data: { data_page_offset: bigint; dictionary_page_offset?: bigint };
    column_index_offset?: bigint;
    column_index_length?: number;
    offset_index_offset?: bigint;
    offset_index_length?: number;
  }[];
}

/** A column chunk's page indexes, written with the footer (hyparquet-writer's PageIndexes). */
interface PageIndexOffsets {
  chunk: unknown;
  offsetIndex?: { page_locations: { offset: bigint }[] };
}

/** The row groups one group writer produced, with their page indexes (written with the footer). */
export interface GroupsWritten {
  readonly groups: readonly unknown[];
  readonly indexes: readonly unknown[];
  readonly rows: number;
}

/** The writer's own bookkeeping, read and set to write one footer over several writers' row groups. */
type Internals = Omit<ParquetWriter, 'row_groups' | 'pendingIndexes' | 'num_rows'> & {
  row_groups: unknown[];
  pendingIndexes: unknown[];
  num_rows: bigint;
};

export class ParquetBody {
  readonly path: string;
  readonly #fd: number;
  readonly #out: Writer & { flush(): void };
  #closed = false;

  /** `append`: the length of the body already in `path` (written and released by a spool), to add to. */
  constructor(path: string, append?: number) {
    this.path = path;
    this.#fd = openSync(path, append === undefined ? 'w+' : 'a');
    this.#out = fdWriter(this.#fd, append);
  }

  /** CRC-32 of the bytes of `part`'s row groups, written here (handed to the kernel first). */
  crcOf(part: GroupsWritten): number {
    this.#out.flush();
    const crc = groupsCrc(this.#fd, part, copyBuffer());
    if (crc === undefined) throw new Error(`${this.path} ends before the row groups just written`);
    return crc;
  }

  /** A body written by someone else (another thread), `bytes` long, to add row groups and the footer to. */
  static append(path: string, bytes: number): ParquetBody {
    return new ParquetBody(path, bytes);
  }

  /** Hands every byte to the kernel and closes the file, with no footer: to be continued with `append`. */
  release(): { path: string; bytes: number } {
    this.#out.flush();
    this.#closed = true;
    closeSync(this.#fd);
    return { path: this.path, bytes: this.#out.offset };
  }

  /**
   * The row groups of `part`, written by another body that is now the file at `from`, copied to the end of
   * this one: their bytes as they are, their offsets moved to where they are now (the results files of an
   * earlier end of the run, used again by this one: src/output/spool/assemble.ts).
   */
  copyGroups(from: string, part: GroupsWritten): GroupsWritten {
    const moved = structuredClone(part) as { groups: RowGroupOffsets[]; indexes: PageIndexOffsets[]; rows: number };
    this.#out.flush();
    const src = openSync(from, 'r');
    const buf = copyBuffer();
    try {
      for (const g of moved.groups) {
        const start = g.columns[0].file_offset;
        const delta = BigInt(this.#out.offset) - start;
        for (let at = Number(start), end = at + Number(g.total_compressed_size); at < end; ) {
          const n = readSync(src, buf, 0, Math.min(buf.length, end - at), at);
          if (n === 0) throw new Error(`${from} ends at byte ${at}, inside a row group`);
          for (let off = 0; off < n; ) off += writeSync(this.#fd, buf, off, n - off);
          this.#out.offset += n;
          at += n;
        }
        for (const c of g.columns) {
          c.file_offset += delta;
          c.meta_data.data_page_offset += delta;
          if (c.meta_data.dictionary_page_offset !== undefined) c.meta_data.dictionary_page_offset += delta;
          // Written again by the footer, where it is.
          delete c.column_index_offset;
          delete c.column_index_length;
          delete c.offset_index_offset;
          delete c.offset_index_length;
        }
        // The page indexes of these columns, still to be written with the footer, point at their pages.
        const own = new Set<unknown>(g.columns);
        for (const x of moved.indexes)
          if (own.has(x.chunk)) for (const p of x.offsetIndex?.page_locations ?? []) p.offset += delta;
      }
    } finally {
      closeSync(src);
    }
    return moved;
  }

  /** A writer of row groups with these columns into this file. */
  groups(columns: readonly ParquetColumn[], rowGroupRows = ROW_GROUP_ROWS): ParquetGroupWriter {
    return new ParquetGroupWriter(this.#newWriter(columns), columns, rowGroupRows);
  }

  #newWriter(columns: readonly ParquetColumn[], metadata: Record<string, string> = {}): Internals {
    return new ParquetWriter({
      writer: this.#out,
      schema: schemaOf(columns),
      codec: 'SNAPPY',
      createdBy: 'bre-batch',
      // An empty list would be written with no element type, which arrow-rs (parquet-wasm, Polars) refuses.
      kvMetadata:
        Object.keys(metadata).length > 0 ? Object.entries(metadata).map(([key, value]) => ({ key, value })) : undefined,
    }) as unknown as Internals;
  }

  /** Writes the footer: these columns, and the row groups of `parts` in that order. Closes the file. */
  finish(columns: readonly ParquetColumn[], parts: readonly GroupsWritten[], metadata?: Record<string, string>): void {
    const footer = this.#newWriter(columns, metadata);
    footer.row_groups = parts.flatMap((p) => [...p.groups]);
    footer.pendingIndexes = parts.flatMap((p) => [...p.indexes]);
    footer.num_rows = BigInt(parts.reduce((n, p) => n + p.rows, 0));
    void footer.finish();
    this.#closed = true;
    closeSync(this.#fd);
  }

  /** Leaves no partial file behind. */
  abort(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
    rmSync(this.path, { force: true });
  }
}

export class ParquetGroupWriter {
  readonly columns: readonly ParquetColumn[];
  rows = 0;
  readonly #pw: Internals;
  readonly #groupRows: number;
  #buffers: unknown[][];
  /**
   * For a column whose values become BigInts: the last value and what it became, reused while the value repeats
   * (a session's number on every row) rather than a BigInt allocated a row.
   */
  readonly #bigint: boolean[];
  readonly #lastIn: unknown[];
  readonly #lastOut: unknown[];
  #buffered = 0;
  /** How much of the writer's bookkeeping `take` has handed out already. */
  #taken = { groups: 0, indexes: 0, rows: 0 };

  constructor(pw: Internals, columns: readonly ParquetColumn[], groupRows: number) {
    this.#pw = pw;
    this.columns = columns;
    this.#groupRows = groupRows;
    this.#buffers = columns.map(() => []);
    this.#bigint = columns.map((c) => c.kind === 'int64' || c.kind === 'timestamp_local_ms');
    this.#lastIn = columns.map(() => undefined);
    this.#lastOut = columns.map(() => null);
  }

  /** One row: a value per column, in column order (JSON values; converted to the column's type here). */
  push(values: readonly unknown[]): void {
    const cols = this.columns;
    for (let i = 0; i < cols.length; i += 1) {
      const v = values[i];
      if (!this.#bigint[i]) this.#buffers[i].push(convert(cols[i].kind, v));
      else if (v === this.#lastIn[i]) this.#buffers[i].push(this.#lastOut[i]);
      else {
        const out = convert(cols[i].kind, v);
        this.#lastIn[i] = v;
        this.#lastOut[i] = out;
        this.#buffers[i].push(out);
      }
    }
    this.#buffered += 1;
    this.rows += 1;
    if (this.#buffered >= this.#groupRows) this.flush();
  }

  /** Writes the rows buffered so far as a (smaller) row group. */
  flush(): void {
    if (this.#buffered === 0) return;
    const columnData = this.columns.map((c, i) => ({ name: c.name, data: this.#buffers[i] }));
    this.#buffers = this.columns.map(() => []);
    const n = this.#buffered;
    this.#buffered = 0;
    void this.#pw.write({ columnData, rowGroupSize: n });
  }

  /** Everything written (call flush first). */
  written(): GroupsWritten {
    return { groups: this.#pw.row_groups, indexes: this.#pw.pendingIndexes, rows: Number(this.#pw.num_rows) };
  }

  /**
   * The rows buffered written as a group, and the groups written since the last `take`: a part of the file
   * that can be listed in a footer on its own (the spool's chunks, src/output/spool/spool.ts).
   */
  take(): GroupsWritten {
    this.flush();
    const pw = this.#pw;
    const t = this.#taken;
    const out = {
      groups: pw.row_groups.slice(t.groups),
      indexes: pw.pendingIndexes.slice(t.indexes),
      rows: Number(pw.num_rows) - t.rows,
    };
    this.#taken = { groups: pw.row_groups.length, indexes: pw.pendingIndexes.length, rows: Number(pw.num_rows) };
    return out;
  }
}

/** One whole Parquet file, written under a temporary name and renamed when complete. */
export class ParquetTableWriter {
  readonly path: string;
  readonly columns: readonly ParquetColumn[];
  readonly #body: ParquetBody;
  readonly #groups: ParquetGroupWriter;
  readonly #metadata: Record<string, string> | undefined;

  constructor(
    path: string,
    columns: readonly ParquetColumn[],
    opts: { rowGroupRows?: number; metadata?: Record<string, string> } = {},
  ) {
    this.path = path;
    this.columns = columns;
    this.#metadata = opts.metadata;
    this.#body = new ParquetBody(`${path}.tmp`);
    this.#groups = this.#body.groups(columns, opts.rowGroupRows);
  }

  get rows(): number {
    return this.#groups.rows;
  }

  push(values: readonly unknown[]): void {
    this.#groups.push(values);
  }

  close(): void {
    this.#groups.flush();
    this.#body.finish(this.columns, [this.#groups.written()], this.#metadata);
    renameSync(this.#body.path, this.path);
  }

  abort(): void {
    this.#body.abort();
  }
}
