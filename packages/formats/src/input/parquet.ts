/**
 * Parquet rows, read with hyparquet (pure JavaScript, no native build) one row group at a time, so memory
 * holds one row group whatever the file's length; hyparquet-compressors adds the codecs warehouses write
 * (ZSTD is Polars' default, GZIP, BROTLI, LZ4) to the SNAPPY hyparquet has.
 *
 * Values keep their Parquet types: numbers stay numbers and strings stay strings (a STRING id `00123`
 * is never a number), structs are objects reached by dotted paths as in NDJSON (../input/fields.ts), lists
 * are arrays. What JSON has no type for is turned into text: INT64 beyond 2^53 into its decimal digits,
 * DATE into `YYYY-MM-DD`, TIMESTAMP into ISO 8601 (UTC), raw bytes into base64.
 *
 * Row numbers are the file's row order from 1; a Parquet row has no line, so `line` is the row number.
 */
import { open } from 'node:fs/promises';
import { parquetMetadataAsync, parquetRead, parquetSchema } from 'hyparquet';
import type { AsyncBuffer, FileMetaData, ParquetParsers, SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { InputRow } from '@bre-batch/core/types';
import { define, isPlainObject } from './fields.js';
import { resolveHeader, type HeaderAsRead } from './header.js';

export interface ParquetOptions {
  /** The header check (see ../input/header.ts); default: trimmed, distinct names. */
  readonly header?: (header: HeaderAsRead) => readonly string[];
  /** Rows per batch handed over (a row group is cut into batches). Default 512. */
  readonly batchRows?: number;
  /**
   * Only these rows, from 0 (`end` not included): a job's chunk (src/input/ranges.ts); only the row groups holding them
   * are read.
   */
  readonly range?: { readonly start: number; readonly end: number };
}

const iso = (ms: number) => new Date(ms).toISOString();
const PARSERS: Partial<ParquetParsers> = {
  dateFromDays: (days) => iso(days * 86_400_000).slice(0, 10),
  timestampFromMilliseconds: (v) => iso(Number(v)),
  timestampFromMicroseconds: (v) => iso(Number(v / 1000n)),
  timestampFromNanoseconds: (v) => iso(Number(v / 1_000_000n)),
};

/** A Parquet value as the rest of the program reads row values (plain JSON values). */
function plainValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return v;
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    default:
      break;
  }
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v as ArrayLike<unknown>, plainValue);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) define(out, k, plainValue(x));
    return out;
  }
  return String(v);
}

/** Dotted paths of the fields inside struct columns (lists and maps are values, not paths). */
function nestedPaths(tree: SchemaTree, prefix: string, into: string[]): void {
  const e = tree.element;
  if (
    tree.children.length === 0 ||
    e.converted_type === 'LIST' ||
    e.converted_type === 'MAP' ||
    e.converted_type === 'MAP_KEY_VALUE'
  )
    return;
  for (const child of tree.children) {
    const path = `${prefix}.${child.element.name}`;
    into.push(path);
    nestedPaths(child, path, into);
  }
}

/** The header of a Parquet file: its top-level columns and the paths inside its structs. */
function parquetHeader(metadata: FileMetaData): HeaderAsRead {
  const schema = parquetSchema(metadata);
  const nested: string[] = [];
  for (const child of schema.children) nestedPaths(child, child.element.name, nested);
  return { names: schema.children.map((c) => c.element.name), nested, where: 'the Parquet schema' };
}

export async function parquetMetadataOf(path: string): Promise<FileMetaData> {
  const file = await openFileBuffer(path);
  try {
    return await parquetMetadataAsync(file);
  } finally {
    await file.close();
  }
}

/** One column of a row group, as hyparquet hands it over: runs of values from `start` (a page or more each). */
class ColumnRuns {
  readonly #runs: { start: number; data: ArrayLike<unknown> }[] = [];
  #at = 0;

  add(start: number, data: ArrayLike<unknown>): void {
    this.#runs.push({ start, data });
  }

  /** The value of row `r` (0-based in the file); rows are asked for in increasing order. */
  value(r: number): unknown {
    if (this.#at === 0 && this.#runs.length > 1) this.#runs.sort((a, b) => a.start - b.start);
    let run = this.#runs[this.#at];
    while (run && r >= run.start + run.data.length) run = this.#runs[++this.#at];
    return run && r >= run.start ? run.data[r - run.start] : undefined;
  }
}

/**
 * The file as hyparquet reads it: each slice read into one ArrayBuffer of its size (hyparquet's own
 * asyncBufferFromFile gathers a read stream's chunks and copies them, twice the memory for every read).
 */
async function openFileBuffer(path: string): Promise<AsyncBuffer & { close(): Promise<void> }> {
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    byteLength: size,
    async slice(start: number, end = size): Promise<ArrayBuffer> {
      const bytes = new Uint8Array(new ArrayBuffer(Math.max(0, end - start)));
      for (let at = 0; at < bytes.length; ) {
        const { bytesRead } = await handle.read(bytes, at, bytes.length - at, start + at);
        if (bytesRead === 0)
          throw new Error(`the Parquet file ended at byte ${start + at} of ${size} (was it changed while being read?)`);
        at += bytesRead;
      }
      return bytes.buffer as ArrayBuffer;
    },
    close: () => handle.close(),
  };
}

/**
 * The rows of a Parquet file, a row group at a time, handed over in batches. A row group is held as
 * hyparquet decodes it, column by column; rows are made a batch at a time as they are taken, so memory
 * holds one row group's columns and one batch of rows (not every row of the group as objects, twice).
 */
export async function* parquetRowBatches(path: string, opts: ParquetOptions = {}): AsyncGenerator<InputRow[]> {
  const file = await openFileBuffer(path);
  try {
    yield* fileRowBatches(file, opts);
  } finally {
    await file.close();
  }
}

/** The least a Parquet file holds: its magic number at both ends and the footer's length. */
const SMALLEST_FILE = 12;

async function* fileRowBatches(file: AsyncBuffer, opts: ParquetOptions): AsyncGenerator<InputRow[]> {
  // 0 bytes: no schema and no rows, an empty input as a 0-byte CSV is (INPUT_EMPTY says "0 bytes").
  if (file.byteLength === 0) return;
  // Fewer bytes than any Parquet file: said in words, not as hyparquet's "Offset is outside the bounds".
  if (file.byteLength < SMALLEST_FILE)
    throw new Error(
      `it is ${file.byteLength} bytes, fewer than any Parquet file holds (${SMALLEST_FILE}: its magic number and footer): was it cut short?`,
    );
  const metadata = await parquetMetadataAsync(file);
  const header = parquetHeader(metadata);
  const names = opts.header ? opts.header(header) : resolveHeader(header);
  const columns = header.names;
  const batchRows = opts.batchRows ?? 512;
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const groupEnd = groupStart + Number(group.num_rows);
    const rowStart = Math.max(groupStart, opts.range?.start ?? 0);
    const rowEnd = Math.min(groupEnd, opts.range?.end ?? Infinity);
    groupStart = groupEnd;
    if (rowStart >= rowEnd) continue;
    // A column at a time: the bytes and the per-value views hyparquet decodes through are one column's at
    // any moment, not the whole row group's (the peak memory of a run is set here).
    const byIndex: ColumnRuns[] = [];
    for (const column of columns) {
      const runs = new ColumnRuns();
      await parquetRead({
        file,
        metadata,
        rowStart,
        rowEnd,
        columns: [column],
        compressors,
        parsers: PARSERS,
        onChunk: (chunk) => runs.add(chunk.rowStart, chunk.columnData),
      });
      byIndex.push(runs);
    }
    for (let at = rowStart; at < rowEnd; at += batchRows) {
      const end = Math.min(rowEnd, at + batchRows);
      const out: InputRow[] = [];
      for (let r = at; r < end; r += 1) {
        const data: Record<string, unknown> = {};
        for (let c = 0; c < byIndex.length; c += 1) define(data, names[c], plainValue(byIndex[c].value(r)));
        out.push({ row: r + 1, line: r + 1, data });
      }
      yield out;
    }
  }
}
