/**
 * What a field holds reaches the row unchanged: random tables of strings (quotes, every separator, CR, LF,
 * CR LF, unicode, leading and trailing spaces) written by csv-stringify with each separator, each line
 * end and each text encoding, read back through the runner's reader in random chunks, give the same strings
 * — with the separator sniffed and with it given.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { readRows } from '@bre-batch/formats/input/read';

const piece = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '"',
      ',',
      ';',
      '\t',
      '|',
      '\r',
      '\n',
      '\r\n',
      ' ',
      '  ',
      '""',
      "'",
      '\uFEFF',
      '\u00a0',
      '€',
    ),
  },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9.-]{1,8}$/) },
);
const cell = fc.array(piece, { maxLength: 6 }).map((parts) => parts.join(''));

const table = fc.integer({ min: 2, max: 6 }).chain((cols) =>
  fc.record({
    header: fc.constant(Array.from({ length: cols }, (_, i) => `col_${i}`)),
    rows: fc.array(fc.array(cell, { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 12 }),
  }),
);

const ENCODINGS = {
  'utf-8': (s: string) => Buffer.from(s),
  'utf-8 BOM': (s: string) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(s)]),
  'utf-16le BOM': (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')]),
  'utf-16be BOM': (s: string) => {
    const b = Buffer.from(s, 'utf16le');
    b.swap16();
    return Buffer.concat([Buffer.from([0xfe, 0xff]), b]);
  },
} as const;

function chunks(buf: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < buf.length; i += 1) {
    const n = sizes.length ? sizes[i % sizes.length] : buf.length;
    out.push(buf.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe("csv-stringify -> the runner's reader gives the same strings", () => {
  it('every separator, line end and encoding; sniffed and given; any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(
        table,
        fc.constantFrom(',', ';', '\t', '|'),
        fc.constantFrom('\n', '\r\n'),
        fc.constantFrom(...(Object.keys(ENCODINGS) as (keyof typeof ENCODINGS)[])),
        fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 4 }),
        fc.boolean(),
        async ({ header, rows }, delimiter, recordDelimiter, encoding, sizes, sniff) => {
          // RFC 4180 quotes a field holding CR or LF, as Excel and Python's csv do; csv-stringify by default
          // quotes only its own record delimiter, which leaves `a,\n\r\n` unreadable by anyone.
          const text = stringify([header, ...rows], {
            delimiter,
            record_delimiter: recordDelimiter === '\n' ? 'unix' : 'windows',
            quoted_match: /[\r\n]/,
          });
          const bytes = ENCODINGS[encoding](text);
          const got: Record<string, unknown>[] = [];
          const stream = Readable.from(chunks(bytes, sizes));
          for await (const r of readRows('-', { format: 'csv', stream, delimiter: sniff ? undefined : delimiter })) {
            expect(r.readError).toBeUndefined();
            got.push(r.data);
          }
          expect(got).toEqual(rows.map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]]))));
        },
      ),
      { numRuns: 300, seed: 12_2026 },
    );
  }, 120_000);
});
