/**
 * PostgreSQL's bulk way (src/db/pg-copy.ts: COPY into a temporary table, then INSERT ... SELECT ... ON
 * CONFLICT; into bre-batch's own table a straight COPY first), which the writer takes for a batch of 100 rows
 * or more, against the multi-row statements it takes for fewer: the same rows, value for value, whatever the
 * text holds (COPY's own escapes: tab, newline, backslash), as an upsert (a key written again is updated, also
 * when it comes late in a straight COPY), in the batch's one transaction; and a value the table refuses in the
 * middle of the stream is SINK_REJECTED with nothing of the batch written, the writer still usable.
 */
import { beforeAll, describe, expect } from 'vitest';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import {
  batch,
  breError,
  errorLine,
  FOLDER,
  openWriter,
  progressAt,
  query,
  result,
  tableRows,
} from '../../helpers/sink.js';

/** Text COPY must carry as it is: its delimiters and escapes, quotes, non-ASCII, long lines. */
const AWKWARD = [
  'a\tb',
  'line\nbreak',
  'cr\rhere',
  'back\\slash',
  '\\N',
  '\\.',
  '',
  ' ',
  '"quoted"',
  "it's",
  'नमस्ते ₹ 😀',
  'x'.repeat(20_000),
];

function stagesOf(i: number): Record<string, Record<string, unknown>> {
  return {
    decision: {
      decision: i % 3 === 0 ? 'Approve' : 'Reject',
      text: AWKWARD[i % AWKWARD.length],
      score: 600 + i,
      big: 9_007_199_254_740_991 - i,
      ratio: i / 7,
      tiny: 1e-300 * i,
      huge: 1e21 * (i + 1),
      ok: i % 2 === 0,
      none: null,
      offers: [{ code: `E\t${i}`, amount: i * 10.5 }],
      meta: { note: AWKWARD[(i + 1) % AWKWARD.length], n: i },
      // Integers in some rows, text in others: the column is text, the integers written as their JSON.
      mixed: i % 4 === 0 ? 'four' : i,
    },
    bureau: { hit: i % 5 !== 0, grade: i % 10 },
  };
}

function tx(i: number, seq: number): NormalisedTransaction {
  return {
    source: 'aa',
    account: `XX${i}`,
    txn_id: `T${i}-${seq}`,
    timestamp: '2024-03-01T10:20:30.125+05:30',
    value_date: '2024-03-01',
    type: seq % 2 ? 'DEBIT' : 'CREDIT',
    amount: seq * 100.25,
    balance: 1000.5 - seq,
    mode: 'UPI',
    narration: AWKWARD[(i + seq) % AWKWARD.length],
  };
}

/** The rows of a table without loaded_at (when each was written), by `order`. */
async function rowsOf(url: string, table: string, order: string): Promise<Record<string, unknown>[]> {
  return (await tableRows(url, table, order)).map(({ loaded_at: _at, ...rest }) => rest);
}

describe.runIf(available.postgres || process.env.CI === 'true')(
  'the writer on PostgreSQL: COPY for 100 rows or more',
  () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase('postgres');
    });

    itDb('postgres')(
      'the same tables as the multi-row statements write, value for value: results, errors and transactions',
      async () => {
        const n = 240;
        const results = Array.from({ length: n }, (_, k) =>
          result(k + 1, `K${k + 1}`, stagesOf(k + 1), { transactions: [tx(k + 1, 0), tx(k + 1, 1)] }),
        );
        const errors = Array.from({ length: 150 }, (_, k) =>
          errorLine(n + k + 1, `E${k + 1}`, 'HTTP_ERROR', {
            message: AWKWARD[k % AWKWARD.length],
            input: { reference_id: `E${k + 1}`, note: AWKWARD[(k + 3) % AWKWARD.length] },
          }),
        );
        // Bulk: the whole batch at once.
        const bulk = await openWriter(url, 'bulk', { transactions: true });
        await bulk.write(FOLDER, batch(results, errors, progressAt(1, 1, 1)));
        await bulk.close();
        // Statements: the same lines in batches under the bulk threshold (their columns added in the same order first).
        const plain = await openWriter(url, 'plain', { transactions: true });
        await plain.write(FOLDER, batch(results.slice(0, 8), [], progressAt(1, 1, 1)));
        for (let i = 0; i < n; i += 40)
          await plain.write(FOLDER, batch(results.slice(i, i + 40), errors.slice(i, i + 40), progressAt(1, 1, 1)));
        await plain.close();
        const [bulkResults, plainResults] = [
          await rowsOf(url, 'bulk', 'reference_id'),
          await rowsOf(url, 'plain', 'reference_id'),
        ];
        expect(bulkResults).toHaveLength(n);
        expect(bulkResults).toEqual(plainResults);
        expect(bulkResults.find((r) => r.reference_id === 'K11')?.decision_text).toBe('x'.repeat(20_000));
        expect(bulkResults.find((r) => r.reference_id === 'K1')?.decision_text).toBe('line\nbreak');
        expect(await rowsOf(url, 'bulk_errors', 'row')).toEqual(await rowsOf(url, 'plain_errors', 'row'));
        expect(await rowsOf(url, 'bulk_transactions', 'reference_id, seq')).toEqual(
          await rowsOf(url, 'plain_transactions', 'reference_id, seq'),
        );
        expect(await rowsOf(url, 'bulk_transactions', 'reference_id, seq')).toHaveLength(2 * n);
      },
    );

    itDb('postgres')(
      'a batch written again, and keys written again with new values: one row per key, the new values',
      async () => {
        const w = await openWriter(url, 'again');
        const first = Array.from({ length: 150 }, (_, k) => result(k + 1, `K${k + 1}`, { d: { v: k, s: 'first' } }));
        await w.write(FOLDER, batch(first, [], progressAt(10, 0, 1)));
        await w.write(FOLDER, batch(first, [], progressAt(10, 0, 2)));
        // Half of the keys again (new rows of a re-run), and new keys; rows that had failed succeed now.
        const failed = Array.from({ length: 120 }, (_, k) => errorLine(1000 + k, `F${k}`));
        await w.write(FOLDER, batch([], failed, progressAt(10, 20, 3)));
        const second = [
          ...Array.from({ length: 75 }, (_, k) => result(500 + k, `K${k + 1}`, { d: { v: -k, s: 'second' } })),
          ...failed.map((e) => result(e.row, e.key!, { d: { v: e.row, s: 'healed' } })),
        ];
        await w.write(FOLDER, batch(second, [], progressAt(30, 20, 4)));
        expect(await w.progress(FOLDER)).toEqual(progressAt(30, 20, 4));
        await w.close();
        const rows = await tableRows(url, 'again', 'row');
        expect(rows).toHaveLength(150 + 120);
        expect(new Set(rows.map((r) => r.reference_id)).size).toBe(rows.length);
        const k1 = rows.find((r) => r.reference_id === 'K1')!;
        expect([k1.row, k1.d_s, k1.d_v]).toEqual(['500', 'second', '0']);
        expect(rows.find((r) => r.reference_id === 'K100')!.d_s).toBe('first');
        expect(await tableRows(url, 'again_errors', 'row')).toEqual([]);
      },
    );

    itDb('postgres')(
      'a long batch whose last key is already in the table: every row written, that one updated',
      async () => {
        const w = await openWriter(url, 'late');
        await w.write(FOLDER, batch([result(1, 'LAST', { d: { v: 'old', pad: '' } })], [], progressAt(10, 0, 1)));
        // About 2 MB: the key already there comes after several pieces of the stream.
        const rows = Array.from({ length: 400 }, (_, k) =>
          result(k + 2, k === 399 ? 'LAST' : `K${k}`, { d: { v: `new ${k}`, pad: 'p'.repeat(5000) } }),
        );
        await w.write(FOLDER, batch(rows, [], progressAt(20, 0, 2)));
        // And again, the keys all there now.
        await w.write(
          FOLDER,
          batch(
            rows.map((r) => ({ ...r, stages: { d: { v: `again ${r.row}`, pad: '' } } })),
            [],
            progressAt(30, 0, 3),
          ),
        );
        expect(await w.progress(FOLDER)).toEqual(progressAt(30, 0, 3));
        await w.close();
        const got = await tableRows(url, 'late', 'row');
        expect(got).toHaveLength(400);
        expect(got.find((r) => r.reference_id === 'LAST')).toMatchObject({ row: '401', d_v: 'again 401', d_pad: '' });
        expect(got.every((r) => r.d_v === `again ${r.row}`)).toBe(true);
      },
    );

    itDb('postgres')(
      "a value bre-batch's own table refuses (a NUL in text) late in a long COPY: SINK_REJECTED, nothing of the batch written, the writer goes on",
      async () => {
        const w = await openWriter(url, 'nul');
        const rows = Array.from({ length: 400 }, (_, k) =>
          result(k + 1, `K${k + 1}`, { d: { code: k === 395 ? 'a\u0000b' : `C${k}`, pad: 'p'.repeat(5000) } }),
        );
        const err = await breError(w.write(FOLDER, batch(rows, [], progressAt(10, 0, 1))));
        expect(err.code).toBe('SINK_REJECTED');
        expect(await w.progress(FOLDER)).toBeUndefined();
        expect(await tableRows(url, 'nul', 'reference_id')).toEqual([]);
        await w.write(
          FOLDER,
          batch(
            rows.filter((r) => r.row !== 396),
            [],
            progressAt(10, 0, 1),
          ),
        );
        expect(await w.progress(FOLDER)).toEqual(progressAt(10, 0, 1));
        await w.close();
        expect(await tableRows(url, 'nul', 'reference_id')).toHaveLength(399);
      },
    );

    itDb('postgres')(
      'a value the table refuses late in a long COPY: SINK_REJECTED, nothing of the batch written, the writer goes on',
      async () => {
        await query(url, `CREATE TABLE strict (reference_id text PRIMARY KEY, "d.code" varchar(8), "d.pad" text)`);
        const w = await openWriter(url, 'strict');
        // About 2 MB, so the stream is several pieces when the server refuses the last rows.
        const rows = Array.from({ length: 400 }, (_, k) =>
          result(k + 1, `K${k + 1}`, { d: { code: k >= 390 ? 'MUCH-TOO-LONG' : `C${k}`, pad: 'p'.repeat(5000) } }),
        );
        const err = await breError(w.write(FOLDER, batch(rows, [], progressAt(10, 0, 1))));
        expect(err.code).toBe('SINK_REJECTED');
        expect(await w.progress(FOLDER)).toBeUndefined();
        expect(await tableRows(url, 'strict', 'reference_id')).toEqual([]);
        await w.write(FOLDER, batch(rows.slice(0, 390), [], progressAt(10, 0, 1)));
        expect(await w.progress(FOLDER)).toEqual(progressAt(10, 0, 1));
        await w.close();
        expect(await tableRows(url, 'strict', 'reference_id')).toHaveLength(390);
      },
    );
  },
);
