/**
 * fast-check generators of broken input files as bytes: CSV with ragged rows, unclosed and stray quotes,
 * NUL bytes, invalid UTF-8, huge fields, CRLF mixes and a BOM; NDJSON with scalars, arrays, truncated
 * objects, deep nesting, NUL bytes and huge strings. Plus an independent count of the data rows a reader
 * must account for, and a helper that reads bytes through `readRows` in arbitrary chunks.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { readRows, type InputFormat } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';

export const LOCATION_HEADER = 'reference_id,user_id,lead_id,latitude,longitude';

const b = (s: string | Buffer | number[]): Buffer =>
  Buffer.isBuffer(s) ? s : typeof s === 'string' ? Buffer.from(s) : Buffer.from(s);

const word = fc.stringMatching(/^[A-Za-z0-9 ._@-]{0,12}$/);
const invalidUtf8 = fc
  .array(fc.constantFrom(0xff, 0xfe, 0xc3, 0x80, 0xe2, 0x82, 0xed, 0xa0, 0xf4, 0x90), { minLength: 1, maxLength: 4 })
  .map((bytes) => b(bytes));
const nul = word.map((w) => Buffer.concat([b(w), b([0]), b(w)]));
const huge = fc.integer({ min: 300, max: 6000 }).map((n) => b('x'.repeat(n)));
const unicode = fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => b(s.replace(/[",\r\n]/g, '')));
const numberText = fc.oneof(
  fc.double({ noNaN: false }).map(String),
  fc.integer().map(String),
  fc.constantFrom('1e400', '-0', '0x1F', '12,5'),
);

/** A CSV cell without any quote character. */
const plainCell = fc.oneof(
  { weight: 6, arbitrary: word.map(b) },
  { weight: 2, arbitrary: numberText.map((s) => b(s.replace(/,/g, ''))) },
  { weight: 1, arbitrary: nul },
  { weight: 1, arbitrary: invalidUtf8 },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: unicode },
);

/** A CSV cell that may hold quotes: well quoted (commas, newlines, escaped quotes inside), unclosed, stray. */
const quotedCell = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }).map((s) => b(`"${s.replace(/"/g, '""')}"`)) },
  { weight: 2, arbitrary: fc.constantFrom('"a,b"', '"line one\nline two"', '"crlf\r\ninside"', '"say ""hi"""').map(b) },
  { weight: 1, arbitrary: word.map((w) => b(`"${w}`)) },
  { weight: 1, arbitrary: word.map((w) => b(`${w}"${w}`)) },
  { weight: 1, arbitrary: fc.constantFrom('"', '""', '"""').map(b) },
);

const terminator = fc.constantFrom('\n', '\n', '\n', '\r\n', '\n\n', '\r\n\r\n', ' \n').map(b);

function csvRecord(quotes: boolean): fc.Arbitrary<Buffer> {
  const cell = quotes ? fc.oneof({ weight: 4, arbitrary: plainCell }, { weight: 1, arbitrary: quotedCell }) : plainCell;
  // Mostly five cells (the header's count), sometimes ragged.
  const count = fc.oneof(
    { weight: 4, arbitrary: fc.constant(5) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 9 }) },
  );
  return count
    .chain((n) => fc.array(cell, { minLength: n, maxLength: n }))
    .map((cells) => Buffer.concat(cells.flatMap((c, i) => (i === 0 ? [c] : [b(','), c]))));
}

/** Headers that cannot be read (empty name, duplicate, unclosed quote). */
export const BROKEN_HEADERS = ['reference_id,,lead_id', 'reference_id,reference_id', '"reference_id,user_id'];

export interface CsvOptions {
  /** Allow quote characters in data rows (default true). */
  readonly quotes?: boolean;
  /** Sometimes use a header that cannot be read (default false). */
  readonly brokenHeader?: boolean;
  readonly maxRows?: number;
}

export function csvFile(opts: CsvOptions = {}): fc.Arbitrary<Buffer> {
  const header = opts.brokenHeader
    ? fc.oneof(
        { weight: 5, arbitrary: fc.constant(LOCATION_HEADER) },
        { weight: 1, arbitrary: fc.constantFrom(...BROKEN_HEADERS) },
      )
    : fc.constant(LOCATION_HEADER);
  return fc
    .record({
      bom: fc.boolean(),
      leadingBlank: fc.boolean(),
      header,
      rows: fc.array(fc.tuple(csvRecord(opts.quotes ?? true), terminator), { maxLength: opts.maxRows ?? 30 }),
      lastNewline: fc.boolean(),
    })
    .map((f) => {
      const parts: Buffer[] = [];
      if (f.bom) parts.push(b([0xef, 0xbb, 0xbf]));
      if (f.leadingBlank && !f.bom) parts.push(b('\n'));
      parts.push(b(f.header), b('\n'));
      f.rows.forEach(([rec, term], i) => {
        parts.push(rec);
        if (i < f.rows.length - 1 || f.lastNewline) parts.push(term);
      });
      return Buffer.concat(parts);
    });
}

const jsonScalar = fc.oneof(fc.string({ maxLength: 12 }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
const locationObject = fc.record(
  {
    reference_id: fc.oneof({ weight: 4, arbitrary: word.map((w) => `REF-${w}`) }, { weight: 1, arbitrary: jsonScalar }),
    user_id: fc.oneof({ weight: 4, arbitrary: word }, { weight: 1, arbitrary: jsonScalar }),
    lead_id: fc.oneof(word, jsonScalar),
    latitude: fc.oneof(fc.double({ min: -90, max: 90 }), jsonScalar, fc.object({ maxDepth: 2 })),
    longitude: fc.oneof(fc.double({ min: -180, max: 180 }), jsonScalar, fc.array(jsonScalar, { maxLength: 3 })),
  },
  { requiredKeys: [] },
);

const ndjsonLine = fc.oneof(
  { weight: 6, arbitrary: locationObject.map((o) => b(JSON.stringify(o))) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => b(JSON.stringify(v) ?? 'null')) },
  {
    weight: 1,
    arbitrary: fc.tuple(locationObject, fc.nat()).map(([o, n]) => {
      const t = JSON.stringify(o);
      return b(t.slice(0, n % Math.max(1, t.length)));
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom(10, 1000, 60_000).map((d) => b('['.repeat(d) + ']'.repeat(d))) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(10, 1000, 20_000)
      .map((d) => b(`${'{"reference_id":"deep","a":'.repeat(d)}1${'}'.repeat(d)}`)),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(10, 20_000)
      .map((d) => b(`{"reference_id":${'['.repeat(d)}${']'.repeat(d)},"user_id":"u"}`)),
  },
  { weight: 1, arbitrary: word.map((w) => Buffer.concat([b(`{"reference_id":"${w}`), b([0]), b('"}')])) },
  { weight: 1, arbitrary: word.map((w) => b(`{"reference_id":"nul\\u0000${w}","user_id":"u"}`)) },
  { weight: 1, arbitrary: invalidUtf8.map((x) => Buffer.concat([b('{"reference_id":"'), x, b('","user_id":"u1"}')])) },
  { weight: 1, arbitrary: huge.map((x) => Buffer.concat([b('{"reference_id":"huge","user_id":"'), x, b('"}')])) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '   ', '\t', '{', '}', 'null', '"text"', '[1,2]', '{"a":1}{"b":2}').map(b),
  },
);

export function ndjsonFile(maxRows = 30): fc.Arbitrary<Buffer> {
  return fc
    .record({
      bom: fc.boolean(),
      lines: fc.array(fc.tuple(ndjsonLine, fc.constantFrom('\n', '\r\n', '\n\n').map(b)), { maxLength: maxRows }),
      lastNewline: fc.boolean(),
    })
    .map((f) =>
      Buffer.concat([
        ...(f.bom ? [b([0xef, 0xbb, 0xbf])] : []),
        ...f.lines.flatMap(([l, t], i) => (i < f.lines.length - 1 || f.lastNewline ? [l, t] : [l])),
      ]),
    );
}

/**
 * Physical lines as the contract counts them, computed here independently of src/input: split on LF, a
 * trailing CR dropped, a BOM dropped on line 1; `long` when longer than `max` bytes (CR included).
 */
function physicalLines(buf: Buffer, max: number): { text: string; long: boolean }[] {
  const out: { text: string; long: boolean }[] = [];
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl === -1 ? buf.length : nl;
    if (nl === -1 && end === start) break;
    let line = buf.subarray(start, end);
    const long = line.length > max;
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (out.length === 0 && line.length >= 3 && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf)
      line = line.subarray(3);
    out.push({ text: long ? '' : new TextDecoder().decode(line), long });
    if (nl === -1) break;
    start = nl + 1;
  }
  return out;
}

/** Data rows a reader must produce: non-blank lines (and too-long ones), after the header for CSV. */
export function expectedRowCount(buf: Buffer, format: InputFormat, max: number): number {
  const lines = physicalLines(buf, max).filter((l) => l.long || l.text.trim() !== '');
  return format === 'csv' ? Math.max(0, lines.length - 1) : lines.length;
}

/** `buf` cut into chunks at the given (sorted, deduplicated) offsets. */
export function chunked(buf: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((x, y) => x - y);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    if (p > prev) out.push(buf.subarray(prev, p));
    prev = Math.max(prev, p);
  }
  if (prev < buf.length) out.push(buf.subarray(prev));
  return out;
}

export interface ReadOutcome {
  readonly rows: InputRow[];
  /** The message when the reader threw (after `rows`). */
  readonly thrown?: string;
}

/** Reads bytes through the real reader, fed as the given chunks. */
export async function readAll(
  chunks: readonly Buffer[],
  format: InputFormat,
  maxRecordBytes: number,
): Promise<ReadOutcome> {
  const rows: InputRow[] = [];
  try {
    for await (const r of readRows('-', { format, maxRecordBytes, stream: Readable.from(chunks) })) rows.push(r);
  } catch (err) {
    return { rows, thrown: err instanceof Error ? err.message : String(err) };
  }
  return { rows };
}
