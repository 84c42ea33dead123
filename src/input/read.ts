/** Input rows from a CSV or NDJSON file (or stdin), streamed: memory stays flat whatever the file size. */
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import { BreError } from '../errors.js';
import type { InputRow } from '../types.js';
import { csvRowBatches } from './csv.js';
import { readLineBatches, unbatch } from './lines.js';
import { ndjsonRowBatches } from './ndjson.js';

export type InputFormat = 'csv' | 'ndjson';

export interface ReadOptions {
  /** Default: from the extension (.csv; .ndjson/.jsonl). Required for stdin. */
  readonly format?: InputFormat;
  /** Largest record accepted; larger ones become row errors. Default 8 MiB. */
  readonly maxRecordBytes?: number;
  /** Stream to read instead of opening `path` (stdin). */
  readonly stream?: Readable;
}

export const DEFAULT_MAX_RECORD_BYTES = 8 * 1024 * 1024;

export function formatFromPath(path: string): InputFormat | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  return undefined;
}

export function resolveFormat(path: string, format?: string): InputFormat {
  if (format !== undefined) {
    if (format === 'csv' || format === 'ndjson') return format;
    throw new BreError('USAGE', `Expected --input-format csv or ndjson, got '${format}'`, { field: 'input-format' });
  }
  if (path === '-') throw new BreError('USAGE', 'Expected --input-format csv or ndjson when reading stdin (--input -)');
  const f = formatFromPath(path);
  if (!f) throw new BreError('USAGE', `Expected an input file ending in .csv, .ndjson or .jsonl (or --input-format), got '${path}'`);
  return f;
}

/** The rows one by one. */
export function readRows(path: string, opts: ReadOptions = {}): AsyncGenerator<InputRow> {
  return unbatch(readRowBatches(path, opts));
}

/**
 * The rows in batches (those of one chunk of the file, never empty), for the runner: a step of an async
 * generator costs several promises, which a run of thousands of rows a second notices.
 */
export function readRowBatches(path: string, opts: ReadOptions = {}): AsyncGenerator<InputRow[]> {
  const format = resolveFormat(path, opts.format);
  const max = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  // 16 KiB chunks: a batch is a chunk's rows, all made at once and alive until the runner takes them; small
  // batches keep that young and cheap for the GC (README: Performance).
  const stream = opts.stream ?? (path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 16 * 1024 }));
  const lines = readLineBatches(stream, max);
  return format === 'csv' ? csvRowBatches(lines, { maxRecordBytes: max }) : ndjsonRowBatches(lines, max);
}
