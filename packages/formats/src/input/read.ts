/**
 * Input rows from a CSV, TSV, NDJSON or Parquet file, gzip'ed or not (or stdin, but for Parquet), streamed:
 * memory stays flat whatever the file size.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { BreError } from '@bre-batch/core/errors';
import type { InputRow } from '@bre-batch/core/types';
import { csvRowBatches } from './csv.js';
import type { HeaderAsRead } from './header.js';
import { parseDelimiter } from './csv-dialect.js';
import { encodingOf, readLineBatches, unbatch } from './lines.js';
import { ndjsonRowBatches } from './ndjson.js';
import type { ParquetOptions } from './parquet.js';

/** What `--input-format` accepts, and what a file's extension says. */
export const INPUT_FORMATS = ['csv', 'tsv', 'ndjson', 'parquet', 'csv.gz', 'tsv.gz', 'ndjson.gz'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export interface ReadOptions {
  /** Default: from the extension (.csv, .tsv, .ndjson/.jsonl, .parquet, each but Parquet also .gz). Required for stdin. */
  readonly format?: InputFormat;
  /** Largest record accepted; larger ones become row errors. Default 8 MiB. */
  readonly maxRecordBytes?: number;
  /** Stream to read instead of opening `path` (stdin). */
  readonly stream?: Readable;
  /** Text encoding, a WHATWG label (windows-1252, latin1, utf-16le, shift_jis...). Default UTF-8; a BOM decides. */
  readonly encoding?: string;
  /** CSV field separator. Default: TAB for TSV, else sniffed among , ; TAB | (see ./csv-dialect.ts). */
  readonly delimiter?: string;
  /** The header check (CSV, TSV, Parquet): the header as read -> the names rows are keyed by. Default: trimmed, distinct. */
  readonly header?: (header: HeaderAsRead) => readonly string[];
  /** Hears lines for the person running (the separator sniffed). */
  readonly notice?: (line: string) => void;
  /** Hears the encoding the text is decoded with (a byte order mark's, `encoding`, else utf-8), once, before the first row. */
  readonly onEncoding?: (name: string) => void;
}

export const DEFAULT_MAX_RECORD_BYTES = 8 * 1024 * 1024;

const EXTENSIONS: readonly [string, InputFormat][] = [
  ['.csv', 'csv'],
  ['.tsv', 'tsv'],
  ['.ndjson', 'ndjson'],
  ['.jsonl', 'ndjson'],
  ['.parquet', 'parquet'],
  ['.csv.gz', 'csv.gz'],
  ['.tsv.gz', 'tsv.gz'],
  ['.ndjson.gz', 'ndjson.gz'],
  ['.jsonl.gz', 'ndjson.gz'],
];

function formatFromPath(path: string): InputFormat | undefined {
  const lower = path.toLowerCase();
  let found: [string, InputFormat] | undefined;
  for (const e of EXTENSIONS) if (lower.endsWith(e[0]) && (!found || e[0].length > found[0].length)) found = e;
  return found?.[1];
}

export function resolveFormat(path: string, format?: string): InputFormat {
  const names = INPUT_FORMATS.join(', ');
  if (format !== undefined) {
    if ((INPUT_FORMATS as readonly string[]).includes(format)) {
      if (path === '-' && format === 'parquet')
        throw new BreError(
          'USAGE',
          'Expected a Parquet file, got --input - (stdin): Parquet keeps its index at the end of the file, so it cannot be streamed; save it to a file first',
        );
      return format as InputFormat;
    }
    throw new BreError('USAGE', `Expected --input-format to be one of ${names}, got '${format}'`, {
      field: 'input-format',
    });
  }
  if (path === '-')
    throw new BreError(
      'USAGE',
      "Expected --input-format csv, tsv or ndjson (gzip'ed: csv.gz, tsv.gz, ndjson.gz) when reading stdin (--input -)",
    );
  const f = formatFromPath(path);
  if (!f) {
    const what = OTHER_FILES.find(([ext]) => path.toLowerCase().endsWith(ext))?.[1];
    throw new BreError(
      'USAGE',
      `Expected an input file ending in .csv, .tsv, .ndjson, .jsonl or .parquet (CSV, TSV and NDJSON also gzip'ed: .csv.gz...), or --input-format; got '${path}'${what ? `, ${what}` : ''}`,
    );
  }
  return f;
}

const SAVE_AS_CSV = 'save it as CSV (Excel: Save As, "CSV UTF-8") and give that file';

/** Files often given by mistake, by extension: what they are and what to do, as the same file named .csv is told. */
const OTHER_FILES: readonly [string, string][] = [
  ['.xlsx', `an Excel workbook: ${SAVE_AS_CSV}`],
  ['.xlsm', `an Excel workbook: ${SAVE_AS_CSV}`],
  ['.xlsb', `an Excel workbook: ${SAVE_AS_CSV}`],
  ['.xls', `an old Excel workbook: ${SAVE_AS_CSV}`],
  ['.ods', `an OpenDocument spreadsheet: ${SAVE_AS_CSV}`],
  ['.numbers', `a Numbers spreadsheet: ${SAVE_AS_CSV}`],
  ['.json', 'a JSON file: give NDJSON, one JSON object a line, named .ndjson or .jsonl'],
  ['.txt', 'a text file: give --input-format csv or tsv if it is one'],
  ['.zip', 'a ZIP archive: unpack it and give the CSV, NDJSON or Parquet file inside'],
];

/** Whether `value` names an input format (e.g. a manifest's `input.format`). */
export function isInputFormat(value: unknown): value is InputFormat {
  return typeof value === 'string' && (INPUT_FORMATS as readonly string[]).includes(value);
}

/**
 * `--encoding` and `--delimiter` as given (`run`, `compare`), checked against the input's format: the
 * encoding's name and the separator's character; USAGE (exit 2) when they do not fit.
 */
export function resolveTextOptions(
  given: { readonly encoding?: string; readonly delimiter?: string },
  format: InputFormat,
): { encoding?: string; delimiter?: string } {
  const base = baseFormat(format);
  let encoding: string | undefined;
  if (given.encoding !== undefined) {
    if (base === 'parquet')
      throw new BreError(
        'USAGE',
        'Expected no --encoding with Parquet input, got one: Parquet text is UTF-8 by its format',
        { field: 'encoding' },
      );
    encoding = encodingOf(given.encoding);
    if (encoding === undefined)
      throw new BreError(
        'USAGE',
        `Expected --encoding to be an encoding name such as utf-8, windows-1252, latin1, utf-16le or shift_jis (the WHATWG Encoding Standard's labels), got '${given.encoding}'`,
        { field: 'encoding' },
      );
  }
  let delimiter: string | undefined;
  if (given.delimiter !== undefined) {
    if (base !== 'csv' && base !== 'tsv')
      throw new BreError('USAGE', `Expected --delimiter only with CSV or TSV input, got it with ${base}`, {
        field: 'delimiter',
      });
    delimiter = parseDelimiter(given.delimiter);
    if (delimiter === undefined)
      throw new BreError(
        'USAGE',
        `Expected --delimiter to be one character (or tab, comma, semicolon, pipe), got '${given.delimiter}'`,
        { field: 'delimiter' },
      );
  }
  return { encoding, delimiter };
}

/** The format without its compression: what the rows are written in. */
export function baseFormat(format: InputFormat): 'csv' | 'tsv' | 'ndjson' | 'parquet' {
  return format.replace(/\.gz$/, '') as 'csv' | 'tsv' | 'ndjson' | 'parquet';
}

/** Whether the first line of the input is a header (and not a row). */
function hasHeaderLine(format: InputFormat): boolean {
  const base = baseFormat(format);
  return base === 'csv' || base === 'tsv';
}

/**
 * About how many data rows the input holds, for the progress bar and estimates, without parsing: the
 * newlines of the text (gunzipped when needed) less a header, or the row count of a Parquet footer.
 */
export async function estimateRows(path: string, format: InputFormat): Promise<number> {
  if (baseFormat(format) === 'parquet') {
    const { parquetMetadataOf } = await import('./parquet.js');
    return Number((await parquetMetadataOf(path)).num_rows);
  }
  let n = 0;
  const raw = createReadStream(path, { highWaterMark: 1024 * 1024 });
  const stream: Readable = format.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  if (stream !== raw) raw.on('error', (err: Error) => stream.destroy(err));
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n += 1;
  }
  return Math.max(0, n - (hasHeaderLine(format) ? 1 : 0));
}

/** The rows one by one. */
export function readRows(path: string, opts: ReadOptions = {}): AsyncGenerator<InputRow> {
  return unbatch(readRowBatches(path, opts));
}

/** A Parquet file's rows: its reader (hyparquet and its codecs) is loaded when a Parquet input is read. */
async function* parquetRowBatches(path: string, opts: ParquetOptions): AsyncGenerator<InputRow[]> {
  const parquet = await import('./parquet.js');
  yield* parquet.parquetRowBatches(path, opts);
}

/** The byte stream of a text input, gunzipped when the format says so. */
function openBytes(path: string, format: InputFormat, stream?: Readable): Readable {
  // 16 KiB chunks: a batch is a chunk's rows, all made at once and alive until the runner takes them; small
  // batches keep that young and cheap for the GC (docs/performance.md).
  const raw: Readable = stream ?? (path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 16 * 1024 }));
  if (!format.endsWith('.gz')) return raw;
  const gunzip = createGunzip({ chunkSize: 16 * 1024 });
  // A read error of the file reaches the reader through the gunzip stream it iterates.
  raw.on('error', (err: Error) => gunzip.destroy(err));
  return raw.pipe(gunzip);
}

/**
 * The rows in batches (those of one chunk of the file, never empty), for the runner: a step of an async
 * generator costs several promises, which a run of thousands of rows a second notices.
 */
export function readRowBatches(path: string, opts: ReadOptions = {}): AsyncGenerator<InputRow[]> {
  const format = resolveFormat(path, opts.format);
  const base = baseFormat(format);
  if (base === 'parquet') return parquetRowBatches(path, { header: opts.header });
  const max = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  let encoding = 'utf-8';
  const lines = readLineBatches(openBytes(path, format, opts.stream), max, opts.encoding, (e) => {
    encoding = e;
    opts.onEncoding?.(e);
  });
  if (base === 'ndjson') return ndjsonRowBatches(lines, max, () => encoding);
  return csvRowBatches(lines, {
    maxRecordBytes: max,
    delimiter: opts.delimiter ?? (base === 'tsv' ? '\t' : undefined),
    header: opts.header,
    notice: opts.notice,
    encoding: () => encoding,
  });
}
