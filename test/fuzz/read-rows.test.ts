/**
 * Bad input at scale (issue 5, point 5), in process: random broken CSV and NDJSON byte streams through the
 * real reader (`readRows`), fed in random chunks. The reader never throws, except for a CSV header it
 * cannot read (empty or duplicate column name, unclosed quote, longer than the record limit): that is the
 * one input error that stops a run before it starts (exit 2). Every data row it produces is numbered 1..n
 * without gaps, and every data line is accounted for.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BROKEN_HEADERS,
  LOCATION_HEADER,
  chunked,
  csvFile,
  expectedRowCount,
  ndjsonFile,
  readAll,
  type ReadOutcome,
} from './inputs.js';

/** Small, so that the generated huge fields exceed it. */
const MAX = 2048;
const RUNS = { numRuns: 150, seed: 5_2026 } as const;

function checkNumbering(out: ReadOutcome): void {
  out.rows.forEach((r, i) => {
    expect(r.row).toBe(i + 1);
    if (i > 0) expect(r.line).toBeGreaterThan(out.rows[i - 1].line);
    if (r.readError) {
      expect(r.readError.code).toBe('MALFORMED_ROW');
      // A record of the wrong width keeps the cells it shares with the header (the error line names its key);
      // any other broken record holds nothing.
      if (/ columns, the header has /.test(r.readError.message)) {
        expect(Object.values(r.data).every((v) => typeof v === 'string')).toBe(true);
      } else {
        expect(r.data).toEqual({});
      }
    }
  });
}

const cuts = fc.array(fc.nat(), { maxLength: 40 });

describe('CSV fuzz', () => {
  it('never throws but for the header; rows 1..n without gaps; the same rows whatever the chunking', async () => {
    await fc.assert(
      fc.asyncProperty(csvFile({ brokenHeader: true }), cuts, async (buf, cut) => {
        const whole = await readAll([buf], 'csv', MAX);
        const pieces = await readAll(chunked(buf, cut), 'csv', MAX);
        expect(pieces).toEqual(whole);
        checkNumbering(whole);
        if (whole.thrown !== undefined) {
          expect(whole.rows).toEqual([]);
          expect(whole.thrown).toMatch(/header/);
          const text = buf.toString('latin1');
          expect(BROKEN_HEADERS.some((h) => text.includes(h))).toBe(true);
        } else {
          // With a good header, every row has the header's columns or is a row error.
          for (const r of whole.rows) if (!r.readError) expect(Object.keys(r.data)).toEqual(LOCATION_HEADER.split(','));
        }
      }),
      RUNS,
    );
  }, 60_000);

  it('without quote characters every non-blank line after the header is exactly one row', async () => {
    await fc.assert(
      fc.asyncProperty(csvFile({ quotes: false }), cuts, async (buf, cut) => {
        const out = await readAll(chunked(buf, cut), 'csv', MAX);
        expect(out.thrown).toBeUndefined();
        checkNumbering(out);
        expect(out.rows.length).toBe(expectedRowCount(buf, 'csv', MAX));
      }),
      RUNS,
    );
  }, 60_000);

  it('with quotes, no line is lost: rows start on distinct data lines and cover every line that starts a record', async () => {
    await fc.assert(
      fc.asyncProperty(csvFile({ quotes: true }), async (buf) => {
        const out = await readAll([buf], 'csv', MAX);
        expect(out.thrown).toBeUndefined();
        checkNumbering(out);
        const expected = expectedRowCount(buf, 'csv', MAX);
        // A quoted field may join lines into one record, never more rows than data lines.
        expect(out.rows.length).toBeLessThanOrEqual(expected);
        if (expected > 0) expect(out.rows.length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  }, 60_000);
});

describe('NDJSON fuzz', () => {
  it('never throws; every non-blank line is exactly one row (data object or row error); chunking does not matter', async () => {
    await fc.assert(
      fc.asyncProperty(ndjsonFile(), cuts, async (buf, cut) => {
        const whole = await readAll([buf], 'ndjson', MAX * 64);
        expect(whole.thrown).toBeUndefined();
        checkNumbering(whole);
        expect(whole.rows.length).toBe(expectedRowCount(buf, 'ndjson', MAX * 64));
        for (const r of whole.rows) {
          if (!r.readError) expect(typeof r.data === 'object' && r.data !== null && !Array.isArray(r.data)).toBe(true);
        }
        const pieces = await readAll(chunked(buf, cut), 'ndjson', MAX * 64);
        expect(pieces.rows.length).toBe(whole.rows.length);
        expect(pieces.rows.map((r) => [r.row, r.line, r.readError?.message ?? null])).toEqual(
          whole.rows.map((r) => [r.row, r.line, r.readError?.message ?? null]),
        );
      }),
      { numRuns: 100, seed: 7_2026 },
    );
  }, 90_000);

  it('a line past the record limit is one row error, and the next line is read normally', async () => {
    const buf = Buffer.from(`{"reference_id":"a"}\n{"reference_id":"${'x'.repeat(5000)}"}\n{"reference_id":"c"}\n`);
    const out = await readAll(chunked(buf, [7, 100, 4000]), 'ndjson', 1024);
    expect(out.rows.map((r) => [r.row, r.line, r.readError?.code ?? 'ok'])).toEqual([
      [1, 1, 'ok'],
      [2, 2, 'MALFORMED_ROW'],
      [3, 3, 'ok'],
    ]);
  });
});
