/**
 * What a file given as --input is, before it is read as rows: a path that does not exist, a folder, or a
 * binary file (an image renamed .csv, random bytes) says so in words, instead of failing later as text in
 * an unknown encoding or as a raw ENOENT. And, once read, what an input with no data rows held, so that a
 * truncated nightly export is named for what it is.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { baseFormat, type InputFormat } from '@bre-batch/formats/input/read';

/** Bytes looked at to decide text or binary (the first 8 KiB, as git and file(1) do). */
const SNIFF_BYTES = 8192;

/** Signatures of the files most often renamed or exported by mistake. */
const SIGNATURES: readonly [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'a GIF image'],
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
  [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (an Excel .xlsx file is one: save it as CSV)'],
  [[0xd0, 0xcf, 0x11, 0xe0], 'an old Office document (an Excel .xls file: save it as CSV)'],
  [[0x1f, 0x8b], 'a gzip file (name it .csv.gz, .tsv.gz or .ndjson.gz, or give --input-format csv.gz)'],
  [[0x50, 0x41, 0x52, 0x31], 'a Parquet file (name it .parquet, or give --input-format parquet)'],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65], 'an SQLite database'],
  [[0x7f, 0x45, 0x4c, 0x46], 'an executable program'],
];

const startsWith = (head: Buffer, sig: readonly number[]) =>
  head.length >= sig.length && sig.every((b, i) => head[i] === b);

/**
 * What the first bytes of a file that should be text are, when they are not text; undefined for text. A
 * file is taken for binary when it has a known signature, or when more than 8% of its first bytes are
 * control characters (NUL included; text has tabs, newlines and carriage returns): random bytes have about
 * 11%. A text file with a stray NUL or two in a broken row stays text: that row is its error, not the
 * file's. UTF-16 text is half NULs: a byte order mark, or --encoding utf-16le/be, skips the check.
 */
function binaryKind(head: Buffer, encoding?: string): string | undefined {
  for (const [sig, what] of SIGNATURES) if (startsWith(head, sig)) return what;
  if (startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff]) || /^utf-?16/i.test(encoding ?? ''))
    return undefined;
  let control = 0;
  let nul = 0;
  for (const b of head) {
    if (b === 0) nul += 1;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1a) || b === 0x7f) control += 1;
  }
  if (head.length < 16 || control / head.length <= 0.08) return undefined;
  if (nul / head.length > 0.3)
    return 'binary data, or UTF-16 text without a byte order mark (a third or more of its bytes are NUL: give --encoding utf-16le if it is text)';
  return `binary data (${control} of its first ${head.length} bytes are control characters, not text)`;
}

/**
 * Checks a file --input before it is read: it exists, is a file, can be opened, and (for a text format that
 * is not gzip'ed) is text. INPUT_UNREADABLE (exit 2) naming the path and what it is otherwise. Returns its
 * size in bytes. Stdin ('-') is not checked.
 */
export function inspectInputFile(path: string, format: InputFormat, encoding?: string): number | undefined {
  if (path === '-') return undefined;
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory())
      throw new BreError('INPUT_UNREADABLE', `Expected --input to be a file, got '${path}', which is a folder`, {
        field: 'input',
      });
    size = st.size;
  } catch (err) {
    if (err instanceof BreError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new BreError(
        'INPUT_UNREADABLE',
        `Expected --input to be a file, got '${path}', which does not exist (looked for ${resolve(path)})`,
        { field: 'input' },
      );
    throw new BreError('INPUT_UNREADABLE', `cannot read the input ${path}: ${(err as Error).message}`, {
      field: 'input',
    });
  }
  let head: Buffer;
  try {
    const fd = openSync(path, 'r');
    try {
      head = Buffer.alloc(Math.min(SNIFF_BYTES, size));
      head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? 'permission denied (the user running bre-batch may not read it)'
        : (err as Error).message;
    throw new BreError('INPUT_UNREADABLE', `cannot read the input ${path}: ${why}`, { field: 'input' });
  }
  const base = baseFormat(format);
  if (format.endsWith('.gz')) {
    if (head.length > 0 && !startsWith(head, [0x1f, 0x8b])) {
      throw new BreError(
        'INPUT_UNREADABLE',
        `Expected a gzip file (--input-format ${format}), got '${path}', which is ${binaryKind(head, encoding) ?? 'plain text (name it without .gz, or give --input-format ' + base + ')'}`,
        { field: 'input' },
      );
    }
    return size;
  }
  if (base === 'parquet') {
    if (head.length > 0 && !startsWith(head, [0x50, 0x41, 0x52, 0x31])) {
      throw new BreError(
        'INPUT_UNREADABLE',
        `Expected a Parquet file, got '${path}', which is ${binaryKind(head, encoding) ?? 'text (name it .csv, .tsv or .ndjson, or give --input-format)'}`,
        { field: 'input' },
      );
    }
    return size;
  }
  const kind = binaryKind(head, encoding);
  if (kind)
    throw new BreError(
      'INPUT_UNREADABLE',
      `Expected ${base === 'ndjson' ? 'an NDJSON' : `a ${base.toUpperCase()}`} text file, got '${path}', which is ${kind}`,
      { field: 'input' },
    );
  return size;
}

/** What an input with no data rows held, in words, for INPUT_EMPTY and for an --allow-empty run's summary. */
export function describeEmpty(held: {
  readonly bytes?: number;
  readonly columns?: readonly string[];
  readonly format: InputFormat;
}): string {
  if (held.bytes === 0) return '0 bytes';
  if (held.columns !== undefined) {
    const shown = held.columns.slice(0, 5).join(', ') + (held.columns.length > 5 ? ', ...' : '');
    return baseFormat(held.format) === 'parquet'
      ? `0 rows (its schema has ${held.columns.length} columns: ${shown})`
      : `a header only (${held.columns.length} columns: ${shown})`;
  }
  if (held.bytes === undefined) return 'no data rows (nothing, or only blank lines)';
  return held.format.endsWith('.gz')
    ? 'no data rows once decompressed (only blank lines, or nothing)'
    : 'only blank lines';
}
