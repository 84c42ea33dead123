/**
 * A file input cut into ranges of rows, for a job's workers on storage they all see (src/pipeline/job.ts). The
 * file is read once, by the worker that splits the job, with the run's own reader, and a range starts where
 * one of the rows it gave starts, so a worker that reads a range from its first byte with the same reader gets
 * the rows, numbers and lines of a run over the whole file (`splitFile` says how). Parquet's ranges are row
 * numbers; gzip'ed files and UTF-16 text cannot be entered in the middle: the caller refuses them.
 */
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { InputRow } from '@bre-batch/core/types';
import { csvRowBatches } from '@bre-batch/formats/input/csv';
import { readLineBatches, type PhysicalLine } from '@bre-batch/formats/input/lines';
import { ndjsonRowBatches } from '@bre-batch/formats/input/ndjson';
import { DEFAULT_MAX_RECORD_BYTES } from '@bre-batch/formats/input/read';

/** One range of a file's rows. */
export interface FileRange {
  readonly firstRow: number;
  /** The line the first row starts on (Parquet: its row number). */
  readonly firstLine: number;
  readonly rows: number;
  /** The byte the first row's first line starts at, and where the next range starts (the file's size for the last); null for Parquet. */
  readonly byteStart: number | null;
  readonly byteEnd: number | null;
}

/** A range read to the file's end held fewer rows than when it was split: the file is not the one split. */
export class ShortRange extends Error {}

/** How a file's ranges are read: as the run reads the file whole. */
export interface RangeReading {
  readonly format: 'csv' | 'tsv' | 'ndjson' | 'parquet';
  /** The encoding the file's start gave (its byte order mark, --encoding, else utf-8); not UTF-16. */
  readonly encoding: string;
  /** CSV, TSV: the separator the file's start gave (sniffed or --delimiter). */
  readonly delimiter?: string;
  /** CSV, TSV, Parquet: the names rows are keyed by, as the header check resolved them. */
  readonly columns?: readonly string[];
  readonly maxRecordBytes?: number;
}

/** Bytes of a UTF-8 byte order mark at the file's start (lines are counted from after it). */
function bomLength(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(3);
    const n = readSync(fd, head, 0, 3, 0);
    return n === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * The byte each line starts at, from the lines' own lengths (a line's bytes, its CR included, and its '\n'),
 * kept from the oldest line a row may still start on.
 */
class LineStarts {
  #base = 1;
  #starts: number[] = [];
  #next: number;

  constructor(first: number) {
    this.#next = first;
  }

  /** The lines, passed through, their starts noted. */
  async *tap(lines: AsyncIterable<PhysicalLine[]>): AsyncGenerator<PhysicalLine[]> {
    for await (const batch of lines) {
      for (const l of batch) {
        this.#starts.push(this.#next);
        this.#next += l.bytes + 1;
      }
      yield batch;
    }
  }

  at(line: number): number {
    const x = this.#starts[line - this.#base];
    if (x === undefined)
      throw new Error(
        `no start known for line ${line} (lines ${this.#base}-${this.#base + this.#starts.length - 1} are)`,
      );
    return x;
  }

  /** Rows after this one start on later lines: the earlier starts are not needed. */
  forget(before: number): void {
    const drop = before - this.#base;
    if (drop < 4096) return;
    this.#starts = this.#starts.slice(drop);
    this.#base = before;
  }
}

/** A text file's rows as the run reads them, from `start` (with `after`) or from the file's start. */
function textRows(
  stream: Readable,
  r: RangeReading,
  after?: { readonly row: number; readonly line: number },
  tap?: LineStarts,
): AsyncGenerator<InputRow[]> {
  const max = r.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const raw = readLineBatches(stream, max, r.encoding, undefined, after ? { line: after.line } : undefined);
  const lines = tap ? tap.tap(raw) : raw;
  const encoding = () => r.encoding;
  if (r.format === 'ndjson') return ndjsonRowBatches(lines, max, encoding, after?.row ?? 0);
  const columns = r.columns;
  return csvRowBatches(lines, {
    maxRecordBytes: max,
    delimiter: r.delimiter ?? (r.format === 'tsv' ? '\t' : ','),
    // The header was checked when the input was opened: its resolved names are the rows' keys here too.
    header: columns ? () => columns : undefined,
    encoding,
    ...(after && columns ? { after: { columns, row: after.row } } : {}),
  });
}

/**
 * The file cut into ranges of `rows` rows (the last may hold fewer), each starting where a row starts. One
 * pass over the file with the run's reader; memory holds a batch of lines.
 *
 * A range starts where one of the reader's rows starts (packages/formats/src/input/csv.ts, ndjson.ts over
 * lines.ts there), so a quoted field's newlines, CR LF, a byte order mark, blank lines and the header fall where
 * that reader puts them, never where a cut on '\n' would. Each range records the byte its first row's first
 * line starts at, that row's number and line, and its row count: a worker reads the file from that byte with the
 * same reader, the header's names given, numbering rows and lines on from there. The reader looks past a
 * record's first line only while a quoted field is open, and then no further than `maxRecordBytes`, so the rows
 * of a range read from its start are those read from the file's. Parquet has no records to find: its ranges are
 * row numbers (hyparquet reads the row groups that hold them). Gzip'ed files and UTF-16 text cannot be entered in
 * the middle (no byte of a gzip stream starts a row; a UTF-16 file is read through a transcoder whose offsets are
 * not the file's).
 */
export async function splitFile(path: string, r: RangeReading, rows: number): Promise<FileRange[]> {
  if (r.format === 'parquet') {
    // Loaded only for a Parquet input, as packages/formats/src/input/read.ts loads it: hyparquet and its codecs cost
    // every run's start.
    const { parquetMetadataOf } = await import('@bre-batch/formats/input/parquet');
    const total = Number((await parquetMetadataOf(path)).num_rows);
    const out: FileRange[] = [];
    for (let first = 1; first <= total; first += rows)
      out.push({
        firstRow: first,
        firstLine: first,
        rows: Math.min(rows, total - first + 1),
        byteStart: null,
        byteEnd: null,
      });
    return out;
  }
  const size = statSync(path).size;
  const starts = new LineStarts(bomLength(path));
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  const out: { firstRow: number; firstLine: number; rows: number; byteStart: number }[] = [];
  let open: (typeof out)[number] | undefined;
  try {
    for await (const batch of textRows(stream, r, undefined, starts)) {
      for (const row of batch) {
        if (!open) {
          open = { firstRow: row.row, firstLine: row.line, rows: 0, byteStart: starts.at(row.line) };
          out.push(open);
        }
        open.rows += 1;
        if (open.rows >= rows) open = undefined;
      }
      starts.forget(batch[batch.length - 1].line);
    }
  } finally {
    stream.destroy();
  }
  return out.map((x, i) => ({ ...x, byteEnd: out[i + 1]?.byteStart ?? size }));
}

/**
 * One range's rows, read from its first byte to its last row (and no further than the reader needs to end a
 * record). Fewer rows than the range holds means the file is not the one that was split: the error says so.
 */
export async function* readRange(path: string, r: RangeReading, range: FileRange): AsyncGenerator<InputRow[]> {
  let left = range.rows;
  if (r.format === 'parquet') {
    const columns = r.columns;
    const { parquetRowBatches } = await import('@bre-batch/formats/input/parquet');
    const reader = parquetRowBatches(path, {
      ...(columns ? { header: () => columns } : {}),
      range: { start: range.firstRow - 1, end: range.firstRow - 1 + range.rows },
    });
    for await (const batch of reader) {
      left -= batch.length;
      yield batch;
    }
  } else {
    const stream = createReadStream(path, { start: range.byteStart ?? 0, highWaterMark: 16 * 1024 });
    try {
      const rows = textRows(stream, r, { row: range.firstRow - 1, line: range.firstLine - 1 });
      for await (const batch of rows) {
        const take = batch.length <= left ? batch : batch.slice(0, left);
        left -= take.length;
        if (take.length > 0) yield take;
        if (left <= 0) {
          await rows.return(undefined);
          break;
        }
      }
    } finally {
      stream.destroy();
    }
  }
  if (left > 0)
    throw new ShortRange(
      `rows ${range.firstRow}-${range.firstRow + range.rows - 1} (from line ${range.firstLine}) ended ${left} row${left > 1 ? 's' : ''} short`,
    );
}
