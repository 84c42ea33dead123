/**
 * CSV rows with recovery. csv-parse stops at the first structural error (an unclosed quote swallows the
 * rest of the file), but a nightly job must account for every row. So records are delimited here by
 * quote parity over physical lines (RFC 4180: escaped quotes come in pairs, so a record is complete when
 * its quote count is even), and each record is parsed by csv-parse on its own. A record that cannot be
 * completed within `maxRecordBytes`, or that spans lines and fails to parse, costs only its first line:
 * that line becomes a MALFORMED_ROW and parsing restarts at the next line.
 */
import { parse } from 'csv-parse/sync';
import type { InputRow } from '../types.js';
import type { PhysicalLine } from './lines.js';

export interface CsvOptions {
  readonly delimiter?: string;
  readonly maxRecordBytes: number;
}

type Pending = PhysicalLine[];

function quoteCount(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i !== -1; i = s.indexOf('"', i + 1)) n += 1;
  return n;
}

function parseRecord(text: string, delimiter: string): string[] | Error {
  // Most records hold no quotes at all: split them directly; only quoted ones need the real parser
  // (building a csv-parse parser per record costs more than the rest of the reading).
  if (!text.includes('"')) return text.split(delimiter);
  try {
    const records = parse(text, { delimiter, relax_column_count: true, skip_empty_lines: false, bom: false }) as string[][];
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
export async function* csvRowBatches(batches: AsyncIterable<PhysicalLine[]>, opts: CsvOptions): AsyncGenerator<InputRow[]> {
  const delimiter = opts.delimiter ?? ',';
  let header: string[] | undefined;
  let row = 0;
  // Lines given back after a broken multi-line record, read again before the rest.
  const queue: PhysicalLine[] = [];
  const iterator = batches[Symbol.asyncIterator]();
  let batch: PhysicalLine[] = [];
  let at = 0;
  let exhausted = false;
  let out: InputRow[] = [];

  /** The next line, `undefined` at the end of the input, `null` when the stream must be read first. */
  const take = (): PhysicalLine | undefined | null => {
    if (queue.length > 0) return queue.shift();
    if (at < batch.length) return batch[at++];
    return exhausted ? undefined : null;
  };
  const refill = async (): Promise<void> => {
    const r = await iterator.next();
    if (r.done) exhausted = true;
    else { batch = r.value; at = 0; }
  };
  const next = async (): Promise<PhysicalLine | undefined> => {
    for (;;) {
      const l = take();
      if (l !== null) return l;
      await refill();
    }
  };

  const malformed = (first: PhysicalLine, message: string, expected: string): InputRow => {
    row += 1;
    return { row, line: first.line, data: {}, readError: { code: 'MALFORMED_ROW', message, expected } };
  };

  for (;;) {
    const first = take();
    if (first === null) {
      // Hand over what this batch gave before waiting for the stream.
      if (out.length > 0) { yield out; out = []; }
      await refill();
      continue;
    }
    if (!first) break;
    if (first.tooLong) {
      if (!header) throw new Error(`line ${first.line}: the header line is longer than ${opts.maxRecordBytes} bytes`);
      out.push(malformed(first, `line ${first.line} is longer than ${opts.maxRecordBytes} bytes`, `a record of at most ${opts.maxRecordBytes} bytes`));
      continue;
    }
    if (first.text.trim() === '') continue; // blank lines are not data rows
    const pending: Pending = [first];
    let text = first.text;
    let bytes = first.bytes;
    let quotes = quoteCount(text);
    let broken: string | undefined;
    while (quotes % 2 === 1) {
      const more = await next();
      if (!more) { broken = 'a quoted field is not closed before the end of the file'; break; }
      if (more.tooLong || bytes + more.bytes > opts.maxRecordBytes) {
        queue.unshift(more);
        broken = `a quoted field is not closed within ${opts.maxRecordBytes} bytes`;
        break;
      }
      pending.push(more);
      text += '\n' + more.text;
      bytes += more.bytes + 1;
      quotes += quoteCount(more.text);
    }
    let fields: string[] | Error | undefined;
    if (!broken) {
      fields = parseRecord(text, delimiter);
      if (fields instanceof Error) broken = `not valid CSV (${fields.message.split('\n')[0].slice(0, 160)})`;
      else if (header && pending.length > 1 && fields.length !== header.length) broken = 'a quoted field spans lines and the record has the wrong number of columns';
    }
    if (broken) {
      // Only the first line is lost: the rest is read again as records of their own.
      queue.unshift(...pending.slice(1));
      if (!header) throw new Error(`line ${first.line}: the header is not valid CSV: ${broken}`);
      out.push(malformed(first, `line ${first.line}: ${broken}`, 'a well-formed CSV record (quotes closed on the same record)'));
      continue;
    }
    const values = fields as string[];
    if (!header) {
      header = values.map((h) => h.trim());
      const seen = new Set<string>();
      for (const h of header) {
        if (h === '') throw new Error(`line ${first.line}: the header has an empty column name`);
        if (seen.has(h)) throw new Error(`line ${first.line}: the header names column '${h}' twice`);
        seen.add(h);
      }
      continue;
    }
    if (values.length !== header.length) {
      out.push(malformed(first, `line ${first.line}: ${values.length} columns, the header has ${header.length}`, `${header.length} columns as in the header`));
      continue;
    }
    row += 1;
    const data: Record<string, unknown> = {};
    for (let i = 0; i < header.length; i += 1) data[header[i]] = values[i];
    out.push({ row, line: first.line, data });
  }
  if (out.length > 0) yield out;
}
