/**
 * CSV rows with recovery. csv-parse stops at the first structural error (an unclosed quote swallows the
 * rest of the file), but a nightly job must account for every row. So records are delimited here, over
 * physical lines, by the quote automaton of ./csv-dialect.ts (a record is complete when no quoted field is open
 * at the end of a line), and each record is parsed by csv-parse on its own. A record that cannot be
 * completed within `maxRecordBytes`, or that spans lines and fails to parse, costs only its first line:
 * that line becomes a MALFORMED_ROW and parsing restarts at the next line.
 *
 * Values are the field's characters exactly: a CR LF inside a quoted field stays CR LF, spaces stay, a
 * quote inside an unquoted field is a character (`relax_quotes`). A record with bytes that do not decode
 * is that row's error; the records around it are read as usual.
 */
import { parse } from 'csv-parse/sync';
import type { InputRow } from '@bre-batch/core/types';
import {
  describeDelimiter,
  QUOTED,
  RECORD_START,
  scanLine,
  SNIFF_LINES,
  sniffDelimiter,
  type ScanCounts,
} from './csv-dialect.js';
import { resolveHeader, type HeaderAsRead } from './header.js';
import type { PhysicalLine } from './lines.js';

export interface CsvOptions {
  /** The field separator. Default: sniffed from the first lines among `,` `;` TAB `|` (`,` when none fits). */
  readonly delimiter?: string;
  readonly maxRecordBytes: number;
  /** The header check: the header as read -> the names rows are keyed by. Default: trimmed, distinct names. */
  readonly header?: (header: HeaderAsRead) => readonly string[];
  /** Hears one line for the person running: the separator sniffed, when it is not a comma. */
  readonly notice?: (line: string) => void;
  /** The input's encoding, for messages about bytes that do not decode (known once reading has begun). */
  readonly encoding?: () => string;
  /**
   * The rest of a file from a record on (a job's chunk, src/input/ranges.ts): no header line in the lines, these
   * names instead (the header as the file's start gave them), and rows numbered on after `row`.
   */
  readonly after?: { readonly columns: readonly string[]; readonly row: number };
}

type Pending = PhysicalLine[];

function parseRecord(text: string, delimiter: string): string[] | Error {
  // Most records hold no quotes at all: split them directly; only quoted ones need the real parser
  // (building a csv-parse parser per record costs more than the rest of the reading).
  if (!text.includes('"')) return text.split(delimiter);
  try {
    // The record is one record by construction: '\n' as its delimiter keeps a lone CR a character.
    const records = parse(text, {
      delimiter,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      bom: false,
      record_delimiter: '\n',
    }) as string[][];
    if (records.length !== 1) return new Error(`expected one record, found ${records.length}`);
    return records[0];
  } catch (err) {
    return err as Error;
  }
}

/**
 * CSV rows, a batch per batch of lines (see readLineBatches). Lines are taken synchronously from the
 * current batch; only running out of lines waits for the stream.
 */
export async function* csvRowBatches(
  batches: AsyncIterable<PhysicalLine[]>,
  opts: CsvOptions,
): AsyncGenerator<InputRow[]> {
  let delimiter = opts.delimiter ?? ',';
  let delimiterCode = delimiter.charCodeAt(0);
  const encoding = () => opts.encoding?.() ?? 'utf-8';
  let header: readonly string[] | undefined = opts.after?.columns;
  let row = opts.after?.row ?? 0;
  // Lines given back (after a broken multi-line record, or after sniffing), read again before the rest.
  const queue: PhysicalLine[] = [];
  const iterator = batches[Symbol.asyncIterator]();
  let batch: PhysicalLine[] = [];
  let at = 0;
  let exhausted = false;
  let out: InputRow[] = [];
  const scan: ScanCounts = { n: 0, broken: false };

  /** The next line, `undefined` at the end of the input, `null` when the stream must be read first. */
  const take = (): PhysicalLine | undefined | null => {
    if (queue.length > 0) return queue.shift();
    if (at < batch.length) return batch[at++];
    return exhausted ? undefined : null;
  };
  const refill = async (): Promise<void> => {
    const r = await iterator.next();
    if (r.done) exhausted = true;
    else {
      batch = r.value;
      at = 0;
    }
  };
  const next = async (): Promise<PhysicalLine | undefined> => {
    for (;;) {
      const l = take();
      if (l !== null) return l;
      await refill();
    }
  };

  if (opts.delimiter === undefined) {
    const sample: PhysicalLine[] = [];
    let texts = 0;
    for (let l = await next(); l; l = texts < SNIFF_LINES ? await next() : undefined) {
      sample.push(l);
      if (!l.tooLong && l.text.trim() !== '') texts += 1;
    }
    queue.push(...sample);
    const sniffed = sniffDelimiter(sample.filter((l) => !l.tooLong).map((l) => l.text));
    if (sniffed !== undefined && sniffed !== ',') {
      delimiter = sniffed;
      delimiterCode = delimiter.charCodeAt(0);
      opts.notice?.(
        `input: fields separated by ${describeDelimiter(delimiter)} (sniffed from the first lines; --delimiter chooses another)`,
      );
    }
  }

  const malformed = (first: PhysicalLine, message: string, expected: string): InputRow => {
    row += 1;
    return { row, line: first.line, data: {}, readError: { code: 'MALFORMED_ROW', message, expected } };
  };

  for (;;) {
    const first = take();
    if (first === null) {
      // Hand over what this batch gave before waiting for the stream.
      if (out.length > 0) {
        yield out;
        out = [];
      }
      await refill();
      continue;
    }
    if (!first) break;
    if (first.tooLong) {
      if (!header) throw new Error(`line ${first.line}: the header line is longer than ${opts.maxRecordBytes} bytes`);
      out.push(
        malformed(
          first,
          `line ${first.line} is longer than ${opts.maxRecordBytes} bytes`,
          `a record of at most ${opts.maxRecordBytes} bytes`,
        ),
      );
      continue;
    }
    // Blank lines are not data rows; a line of separators is (a TAB is also white space to trim()).
    if (first.text.trim() === '' && first.text.indexOf(delimiter) === -1) continue;
    const pending: Pending = [first];
    let text = first.text;
    let bytes = first.bytes;
    scan.broken = false;
    let state = first.text.indexOf('"') === -1 ? RECORD_START : scanLine(first.text, delimiterCode, RECORD_START, scan);
    let broken: string | undefined;
    while (state === QUOTED) {
      const more = await next();
      if (!more) {
        broken = 'a quoted field is not closed before the end of the file';
        break;
      }
      if (more.tooLong || bytes + more.bytes > opts.maxRecordBytes) {
        queue.unshift(more);
        broken = `a quoted field is not closed within ${opts.maxRecordBytes} bytes`;
        break;
      }
      // The line end inside the quoted field is part of the value, as written (CR LF or LF).
      text += (pending[pending.length - 1].crlf ? '\r\n' : '\n') + more.text;
      pending.push(more);
      bytes += more.bytes + 1;
      if (more.text.indexOf('"') !== -1) state = scanLine(more.text, delimiterCode, state, scan);
    }
    if (!broken && scan.broken) broken = 'a quoted field is followed by more text before the separator';
    let fields: string[] | Error | undefined;
    if (!broken) {
      fields = parseRecord(text, delimiter);
      if (fields instanceof Error) broken = `not valid CSV (${fields.message.split('\n')[0].slice(0, 160)})`;
      else if (header && pending.length > 1 && fields.length !== header.length)
        broken = 'a quoted field spans lines and the record has the wrong number of columns';
    }
    if (broken) {
      // Only the first line is lost: the rest is read again as records of their own.
      queue.unshift(...pending.slice(1));
      if (!header) throw new Error(`line ${first.line}: the header is not valid CSV: ${broken}`);
      out.push(
        malformed(
          first,
          `line ${first.line}: ${broken}`,
          'a well-formed CSV record (quotes closed on the same record)',
        ),
      );
      continue;
    }
    const bad = pending.find((l) => l.undecodable);
    if (!header) {
      if (bad)
        throw new Error(
          `line ${bad.line}: the header has bytes that are not valid ${encoding()}: give --encoding with the file's encoding (e.g. windows-1252)`,
        );
      if (text.includes('\u0000'))
        throw new Error(
          `line ${first.line}: the header holds NUL characters: a UTF-16 file without a byte order mark? give --encoding utf-16le (or utf-16be)`,
        );
      const asRead: HeaderAsRead = { names: fields as string[], where: `line ${first.line}`, delimiter };
      header = opts.header ? opts.header(asRead) : resolveHeader(asRead);
      continue;
    }
    if (bad) {
      out.push(
        malformed(
          first,
          `line ${bad.line} has bytes that are not valid ${encoding()}`,
          `text in ${encoding()} (--encoding names the file's encoding)`,
        ),
      );
      continue;
    }
    const values = fields as string[];
    if (values.length !== header.length) {
      const short = malformed(
        first,
        `line ${first.line}: ${values.length} columns, the header has ${header.length}`,
        `${header.length} columns as in the header`,
      );
      // The cells as far as both go: the error line can name the row's key when its column is among them.
      for (let i = 0; i < Math.min(header.length, values.length); i += 1) short.data[header[i]] = values[i];
      out.push(short);
      continue;
    }
    row += 1;
    const data: Record<string, unknown> = {};
    for (let i = 0; i < header.length; i += 1) data[header[i]] = values[i];
    out.push({ row, line: first.line, data });
  }
  if (out.length > 0) yield out;
}
