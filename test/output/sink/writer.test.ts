/**
 * SinkWriter on bre-batch's own tables, against the real local PostgreSQL and MariaDB: the tables made with
 * their comment, batches upserted (twice is once), an error row gone when its row succeeds, transactions
 * replaced per key, columns added and widened as fields appear, and every kind read back as written.
 */
import { beforeAll, describe, expect } from 'vitest';
import { dialectOf, parseDbUrl } from '../../../src/db/index.js';
import { LOADS_TABLE, newColumnName, OWNED_COMMENT, reservedNames } from '../../../src/output/sink/tables.js';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import {
  batch,
  bool,
  breError,
  errorLine,
  FOLDER,
  json,
  num,
  openWriter,
  progressAt,
  query,
  quote,
  result,
  tableColumns,
  tableComment,
  tableRows,
} from '../../helpers/sink.js';

function tx(amount: number, extra: Partial<NormalisedTransaction> = {}): NormalisedTransaction {
  return {
    source: 'aa',
    account: 'XX1234',
    txn_id: `T${amount}`,
    timestamp: '2024-03-01T10:20:30.125+05:30',
    value_date: '2024-03-01',
    type: 'DEBIT',
    amount,
    balance: 1000.5,
    mode: 'UPI',
    narration: 'chai',
    ...extra,
  };
}

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`SinkWriter on ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect);
    });
    const types =
      dialect === 'postgres'
        ? {
            key: 'text',
            bigint: 'bigint',
            double: 'double precision',
            text: 'text',
            json: 'jsonb',
            boolean: 'boolean',
            ts: 'timestamp without time zone',
            instant: 'timestamp with time zone',
            date: 'date',
          }
        : {
            key: 'varchar',
            bigint: 'bigint',
            double: 'double',
            text: 'longtext',
            json: 'longtext',
            boolean: 'boolean',
            ts: 'datetime',
            instant: 'datetime',
            date: 'date',
          };

    itDb(dialect)(
      'open makes NAME, NAME_errors, NAME_transactions and the commit table, each with the owned comment; opening again changes nothing',
      async () => {
        const w = await openWriter(url, 'made', { transactions: true });
        await w.close();
        for (const t of ['made', 'made_errors', 'made_transactions', LOADS_TABLE])
          expect(await tableComment(url, t), t).toBe(OWNED_COMMENT);
        const made = await tableColumns(url, 'made');
        expect([...made]).toEqual([
          ['reference_id', types.key],
          ['row', 'bigint'],
          ['run_id', types.text],
          ['run_session', 'bigint'],
          ['result', types.json],
          ['loaded_at', types.instant],
        ]);
        const errors = await tableColumns(url, 'made_errors');
        expect([...errors.keys()]).toEqual([
          'row',
          'line',
          'reference_id',
          'stage',
          'status',
          'code',
          'message',
          'field',
          'expected',
          'errors',
          'attempts',
          'input',
          'run_id',
          'run_session',
          'loaded_at',
        ]);
        expect(errors.get('input')).toBe(types.json);
        // When a row was written is an instant; a transaction's timestamp is its wall clock (its offset beside it).
        expect(errors.get('loaded_at')).toBe(types.instant);
        expect((await tableColumns(url, LOADS_TABLE)).get('updated_at')).toBe(types.instant);
        expect((await tableColumns(url, LOADS_TABLE)).get('run_id')).toBe(types.text);
        const txs = await tableColumns(url, 'made_transactions');
        expect(txs.get('timestamp')).toBe(types.ts);
        expect(txs.get('value_date')).toBe(types.date);
        expect(txs.get('amount')).toBe(types.double);
        const u = dialectOf(parseDbUrl(url, { flag: 'test' })).sink.uniqueColumns('made', undefined);
        expect((await query<{ name: string }>(url, u.sql, u.params)).map((r) => r.name)).toEqual(['reference_id']);
        const before = await tableColumns(url, 'made');
        await (await openWriter(url, 'made', { transactions: true })).close();
        expect(await tableColumns(url, 'made')).toEqual(before);
      },
    );

    itDb(dialect)("each row carries the run and session that wrote it; the commit table the folder's run", async () => {
      const w = await openWriter(url, 'stamped');
      await w.write(
        FOLDER,
        batch(
          [
            result(1, 'K1', { d: { x: 1 } }, { runId: 'run-a', runSession: 1 }),
            // An older bre-batch's line: neither.
            result(2, 'K2', { d: { x: 2 } }),
          ],
          [errorLine(3, 'K3', 'HTTP_ERROR', { run_id: 'run-a', run_session: 2 })],
          progressAt(10, 10, 1),
        ),
      );
      await w.close();
      expect(
        (await tableRows(url, 'stamped', 'reference_id')).map((r) => [r.reference_id, r.run_id, num(r.run_session)]),
      ).toEqual([
        ['K1', 'run-a', 1],
        ['K2', null, null],
      ]);
      const [e] = await tableRows(url, 'stamped_errors', 'row');
      expect([e.run_id, num(e.run_session)]).toEqual(['run-a', 2]);
      const loads = await query<{ run_id: string }>(
        url,
        `SELECT run_id FROM ${LOADS_TABLE} WHERE sink_table = 'stamped'`,
      );
      expect(loads).toEqual([{ run_id: FOLDER.runId }]);
    });

    itDb(dialect)(
      'tables made before rows carried their run get run_id and run_session added (as a new field gets its column); the rows written from then carry them',
      async () => {
        await (await openWriter(url, 'older')).close();
        // The tables as an earlier release made them.
        for (const t of ['older', 'older_errors'])
          for (const c of ['run_id', 'run_session'])
            await query(url, `ALTER TABLE ${quote(url, t)} DROP COLUMN ${quote(url, c)}`);
        await query(url, `ALTER TABLE ${LOADS_TABLE} DROP COLUMN run_id`);
        const w = await openWriter(url, 'older');
        expect(w.probe.log.join('\n')).toMatch(
          /column run_id \(\S+\), column run_session \(bigint\) added to older \(/,
        );
        expect(w.probe.log.join('\n')).toMatch(/added to older_errors/);
        await w.write(
          FOLDER,
          batch(
            [result(1, 'K1', { d: { x: 1 } }, { runId: 'run-b', runSession: 3 })],
            [errorLine(2, 'K2', 'HTTP_ERROR', { run_id: 'run-b', run_session: 3 })],
            progressAt(10, 10, 1),
          ),
        );
        await w.close();
        for (const t of ['older', 'older_errors']) {
          const cols = await tableColumns(url, t);
          expect([cols.get('run_id'), cols.get('run_session')], t).toEqual([types.text, 'bigint']);
        }
        const [r] = await tableRows(url, 'older', 'reference_id');
        expect([r.run_id, num(r.run_session)]).toEqual(['run-b', 3]);
        const [e] = await tableRows(url, 'older_errors', 'row');
        expect([e.run_id, num(e.run_session)]).toEqual(['run-b', 3]);
        expect(await query(url, `SELECT run_id FROM ${LOADS_TABLE} WHERE sink_table = 'older'`)).toEqual([
          { run_id: FOLDER.runId },
        ]);
      },
    );

    itDb(dialect)(
      "a column run_id an earlier release gave a field (a stage run's id) keeps its field; the rows' run is not written over it",
      async () => {
        await (await openWriter(url, 'heldrun')).close();
        const sink = dialectOf(parseDbUrl(url, { flag: 'test' })).sink;
        await query(url, `ALTER TABLE ${quote(url, 'heldrun')} DROP COLUMN run_id`);
        for (const sql of sink.addColumn(quote(url, 'heldrun'), {
          name: 'run_id',
          type: types.text === 'text' ? 'text' : 'longtext',
          comment: 'run.id',
        }))
          await query(url, sql);
        const w = await openWriter(url, 'heldrun');
        expect(w.probe.log.join('\n')).toContain("heldrun's column run_id holds the field run.id");
        await w.write(
          FOLDER,
          batch(
            [result(1, 'K1', { run: { id: 'the field' } }, { runId: 'run-c', runSession: 1 })],
            [],
            progressAt(10, 0, 1),
          ),
        );
        await w.close();
        const [r] = await tableRows(url, 'heldrun', 'reference_id');
        expect([r.run_id, num(r.run_session)]).toEqual(['the field', 1]);
        expect([...(await tableColumns(url, 'heldrun')).keys()].filter((c) => c.startsWith('run_id'))).toEqual([
          'run_id',
        ]);
      },
    );

    itDb(dialect)('a sampled run has stratum and weight', async () => {
      const w = await openWriter(url, 'sampled', { sampled: true });
      await w.write(
        FOLDER,
        batch(
          [result(1, 'K1', { d: { x: 1 } }, { stratum: 'north', weight: 12.5 })],
          [errorLine(2, 'K2', 'HTTP_ERROR', { stratum: 'south', weight: 3 })],
          progressAt(10, 10, 1),
        ),
      );
      await w.close();
      expect([...(await tableColumns(url, 'sampled')).keys()].slice(0, 4)).toEqual([
        'reference_id',
        'row',
        'stratum',
        'weight',
      ]);
      const [r] = await tableRows(url, 'sampled', 'reference_id');
      expect([r.stratum, num(r.weight)]).toEqual(['north', 12.5]);
      const [e] = await tableRows(url, 'sampled_errors', 'row');
      expect([e.stratum, num(e.weight)]).toEqual(['south', 3]);
    });

    itDb(dialect)(
      'the same batch written twice leaves one row per key, and the commit table row is updated',
      async () => {
        const w = await openWriter(url, 'twice');
        const results = [
          result(1, 'K1', { d: { decision: 'APPROVE' } }),
          result(2, 'K2', { d: { decision: 'DECLINE' } }),
        ];
        const errors = [errorLine(3, 'K3')];
        expect(await w.progress(FOLDER)).toBeUndefined();
        await w.write(FOLDER, batch(results, errors, progressAt(200, 90, 1)));
        await w.write(FOLDER, batch(results, errors, progressAt(200, 90, 2)));
        // In one batch a key met twice is written once, the last line winning.
        await w.write(
          FOLDER,
          batch(
            [result(2, 'K2', { d: { decision: 'REFER' } }), result(2, 'K2', { d: { decision: 'DECLINE' } })],
            [],
            progressAt(300, 90, 3),
          ),
        );
        expect(await w.progress(FOLDER)).toEqual(progressAt(300, 90, 3));
        // Another folder into the same table has its own row.
        const other = { ...FOLDER, id: 'e'.repeat(32) };
        await w.write(other, batch([], [], progressAt(5, 6, 1)));
        expect(await w.progress(other)).toEqual(progressAt(5, 6, 1));
        await w.close();
        const rows = await tableRows(url, 'twice', 'reference_id');
        expect(rows.map((r) => [r.reference_id, num(r.row), json(r.result)])).toEqual([
          ['K1', 1, { d: { decision: 'APPROVE' } }],
          ['K2', 2, { d: { decision: 'DECLINE' } }],
        ]);
        expect((await tableRows(url, 'twice_errors', 'row')).map((e) => [num(e.row), e.reference_id, e.code])).toEqual([
          [3, 'K3', 'HTTP_ERROR'],
        ]);
        const loads = (await tableRows(url, LOADS_TABLE, 'folder')).filter((l) => l.sink_table === 'twice');
        expect(
          loads.map((l) => [
            l.folder,
            l.host,
            l.path,
            l.results_file,
            num(l.results_bytes),
            l.errors_file,
            num(l.errors_bytes),
            num(l.batches),
          ]),
        ).toEqual([
          ['e'.repeat(32), 'test-host', '/tmp/out', '1:100', 5, '1:101', 6, 1],
          ['f'.repeat(32), 'test-host', '/tmp/out', '1:100', 300, '1:101', 90, 3],
        ]);
      },
    );

    itDb(dialect)("a row's result removes its NAME_errors row in the same transaction", async () => {
      const w = await openWriter(url, 'healed');
      await w.write(
        FOLDER,
        batch(
          [],
          [
            errorLine(3, 'K3'),
            errorLine(4, 'K4', 'INVALID_ROW', {
              errors: [{ field: 'pan', expected: 'a PAN', message: 'no' }],
              field: 'pan',
              expected: 'a PAN',
            }),
          ],
          progressAt(0, 500, 1),
        ),
      );
      const errs = await tableRows(url, 'healed_errors', 'row');
      expect(
        errs.map((e) => [
          num(e.row),
          num(e.line),
          e.reference_id,
          e.stage,
          num(e.status),
          e.code,
          e.field,
          num(e.attempts),
          json(e.input),
        ]),
      ).toEqual([
        [3, 4, 'K3', 'decision', 503, 'HTTP_ERROR', null, 3, { reference_id: 'K3' }],
        [4, 5, 'K4', 'decision', 503, 'INVALID_ROW', 'pan', 3, { reference_id: 'K4' }],
      ]);
      expect(json(errs[1].errors)).toEqual([{ field: 'pan', expected: 'a PAN', message: 'no' }]);
      // --retry-errors: row 3 succeeds now.
      await w.write(FOLDER, batch([result(3, 'K3', { d: { decision: 'APPROVE' } })], [], progressAt(100, 500, 2)));
      await w.close();
      expect((await tableRows(url, 'healed_errors', 'row')).map((e) => num(e.row))).toEqual([4]);
      expect((await tableRows(url, 'healed', 'reference_id')).map((r) => r.reference_id)).toEqual(['K3']);
    });

    itDb(dialect)(
      "a batch is one transaction: a statement refused after the error row's delete undoes the delete, the result and the progress",
      async () => {
        // A NAME_errors of the user's that refuses code 'BAD': the batch's last statement but one fails.
        const q = (id: string) => quote(url, id);
        const keyType = dialect === 'postgres' ? 'text' : 'varchar(255)';
        await query(
          url,
          `CREATE TABLE ${q('atomic_errors')} (${q('row')} bigint PRIMARY KEY, ${q('reference_id')} ${keyType}, ${q('code')} ${keyType} CHECK (${q('code')} <> 'BAD'), ${q('message')} text)`,
        );
        const w = await openWriter(url, 'atomic');
        await w.write(FOLDER, batch([], [errorLine(3, 'K3')], progressAt(0, 100, 1)));
        const refused = await w
          .write(
            FOLDER,
            batch([result(3, 'K3', { d: { ok: true } })], [errorLine(4, 'K4', 'BAD')], progressAt(100, 200, 2)),
          )
          .then(
            () => undefined,
            (e: { code?: string }) => e,
          );
        expect(refused?.code).toBe('SINK_REJECTED');
        expect(await w.progress(FOLDER)).toEqual(progressAt(0, 100, 1));
        await w.close();
        expect((await tableRows(url, 'atomic_errors', 'row')).map((e) => [num(e.row), e.code])).toEqual([
          [3, 'HTTP_ERROR'],
        ]);
        expect(await tableRows(url, 'atomic', 'reference_id')).toEqual([]);
      },
    );

    itDb(dialect)(
      "transactions are replaced per key: a key written again with fewer keeps only those; other keys' stay",
      async () => {
        const w = await openWriter(url, 'acct', { transactions: true });
        await w.write(
          FOLDER,
          batch(
            [
              result(1, 'K1', { a: { n: 3 } }, { transactions: [tx(10), tx(20), tx(30)] }),
              result(
                2,
                'K2',
                { a: { n: 2 } },
                {
                  transactions: [
                    tx(5),
                    tx(6, { timestamp: null, value_date: null, balance: null, txn_id: null, type: 'CREDIT' }),
                  ],
                },
              ),
            ],
            [],
            progressAt(100, 0, 1),
          ),
        );
        await w.write(
          FOLDER,
          batch([result(1, 'K1', { a: { n: 1 } }, { transactions: [tx(99.25)] })], [], progressAt(200, 0, 2)),
        );
        await w.close();
        const rows = await tableRows(url, 'acct_transactions', 'reference_id, seq');
        expect(rows.map((r) => [r.reference_id, num(r.seq), r.txn_id, num(r.amount), r.type])).toEqual([
          ['K1', 0, 'T99.25', 99.25, 'DEBIT'],
          ['K2', 0, 'T5', 5, 'DEBIT'],
          ['K2', 1, null, 6, 'CREDIT'],
        ]);
        // The wall clock as the source wrote it, and its offset beside it.
        expect([
          rows[0].timestamp,
          rows[0].timestamp_offset,
          rows[0].value_date,
          num(rows[0].balance),
          rows[0].mode,
          rows[0].narration,
          rows[0].source,
          rows[0].account,
        ]).toEqual(['2024-03-01T10:20:30.125', '+05:30', '2024-03-01', 1000.5, 'UPI', 'chai', 'aa', 'XX1234']);
        expect([rows[2].timestamp, rows[2].timestamp_offset, rows[2].value_date, rows[2].balance]).toEqual([
          null,
          null,
          null,
          null,
        ]);
      },
    );

    itDb(dialect)('a field appearing later gets a column of its kind; earlier rows have null in it', async () => {
      const w = await openWriter(url, 'grows');
      await w.write(FOLDER, batch([result(1, 'K1', { decision: { decision: 'APPROVE' } })], [], progressAt(10, 0, 1)));
      expect([...(await tableColumns(url, 'grows')).entries()].slice(6)).toEqual([['decision_decision', types.text]]);
      await w.write(
        FOLDER,
        batch(
          [
            result(2, 'K2', {
              decision: { decision: 'DECLINE', score: 7, flag: true, ratio: 0.25, detail: { a: [1] }, nothing: null },
            }),
          ],
          [],
          progressAt(20, 0, 2),
        ),
      );
      await w.close();
      const cols = await tableColumns(url, 'grows');
      expect(Object.fromEntries([...cols].slice(6))).toEqual({
        decision_decision: types.text,
        decision_score: 'bigint',
        decision_flag: 'boolean',
        decision_ratio: types.double,
        decision_detail: types.json,
      });
      // A field that is only ever null has no column: nothing says what kind it is.
      expect(cols.has('decision_nothing')).toBe(false);
      const rows = await tableRows(url, 'grows', 'reference_id');
      expect(rows[0].decision_score).toBeNull();
      expect(rows[0].decision_flag).toBeNull();
      expect(num(rows[1].decision_score)).toBe(7);
    });

    itDb(dialect)(
      'a field that held integers and now holds fractions widens its column to double; values read back exactly; mixed kinds become text',
      async () => {
        const w = await openWriter(url, 'widens');
        await w.write(
          FOLDER,
          batch(
            [result(1, 'K1', { m: { v: 1, w: 5 } }), result(2, 'K2', { m: { v: -9007199254740991, w: 6 } })],
            [],
            progressAt(10, 0, 1),
          ),
        );
        expect((await tableColumns(url, 'widens')).get('m_v')).toBe('bigint');
        await w.write(FOLDER, batch([result(3, 'K3', { m: { v: 2.5, w: 'five' } })], [], progressAt(20, 0, 2)));
        expect((await tableColumns(url, 'widens')).get('m_v')).toBe(types.double);
        expect((await tableColumns(url, 'widens')).get('m_w')).toBe(types.text);
        await w.close();
        // A writer opened afterwards knows the column is double: integers go in without narrowing it back.
        const again = await openWriter(url, 'widens');
        await again.write(FOLDER, batch([result(4, 'K4', { m: { v: 4, w: 7 } })], [], progressAt(30, 0, 3)));
        await again.close();
        const cols = await tableColumns(url, 'widens');
        expect([cols.get('m_v'), cols.get('m_w')]).toEqual([types.double, types.text]);
        const rows = await tableRows(url, 'widens', 'reference_id');
        expect(rows.map((r) => [r.reference_id, r.m_v, r.m_w])).toEqual([
          ['K1', 1, '5'],
          ['K2', -9007199254740991, '6'],
          ['K3', 2.5, 'five'],
          ['K4', 4, '7'],
        ]);
      },
    );

    itDb(dialect)(
      'values read back as written: bigint exact, double, boolean, JSON, text; result holds the whole stages object',
      async () => {
        const stages = {
          s: {
            big: 9007199254740991,
            neg: -42,
            zero: 0,
            ratio: 0.1,
            tiny: 1e-7,
            huge: 1.7976931348623157e308,
            yes: true,
            no: false,
            obj: { a: [1, { b: null }], ü: 'ö' },
            arr: [1, 'two', { three: 3 }],
            text: `Zoë 😀 'single' "double" back\\slash\nnewline`,
            empty: '',
            // Past 2^53 an integer is a double (typeBit): exact as a double.
            unsafe: 2 ** 53 + 2,
          },
          skipped: { skipped: true },
        };
        const w = await openWriter(url, 'values');
        await w.write(FOLDER, batch([result(7, 'KEY-ü', stages)], [], progressAt(10, 0, 1)));
        await w.close();
        const [r] = await tableRows(url, 'values', 'reference_id');
        expect(r.reference_id).toBe('KEY-ü');
        expect(num(r.row)).toBe(7);
        expect(r.s_big).toBe('9007199254740991');
        expect(r.s_neg).toBe('-42');
        expect(r.s_zero).toBe('0');
        expect([r.s_ratio, r.s_tiny, r.s_huge, r.s_unsafe]).toEqual([0.1, 1e-7, 1.7976931348623157e308, 2 ** 53 + 2]);
        expect([bool(r.s_yes), bool(r.s_no)]).toEqual([true, false]);
        expect(json(r.s_obj)).toEqual(stages.s.obj);
        expect(json(r.s_arr)).toEqual(stages.s.arr);
        expect([r.s_text, r.s_empty]).toEqual([stages.s.text, '']);
        expect(bool(r.skipped_skipped)).toBe(true);
        expect(json(r.result)).toEqual(stages);
        expect(String(r.loaded_at)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
        const cols = await tableColumns(url, 'values');
        expect([cols.get('s_big'), cols.get('s_unsafe'), cols.get('s_obj'), cols.get('s_arr')]).toEqual([
          'bigint',
          types.double,
          types.json,
          types.json,
        ]);
      },
    );

    itDb(dialect)(
      'a field name past the identifier limit gets a shortened column, found again by a later writer',
      async () => {
        const header = `decision.${'very_long_field_name_'.repeat(5)}`;
        const field = header.slice('decision.'.length);
        const col = newColumnName(
          header,
          dialectOf(parseDbUrl(url, { flag: 'test' })).maxIdentifier,
          reservedNames('reference_id'),
        );
        expect(col).not.toBe(header);
        const w = await openWriter(url, 'longname');
        await w.write(FOLDER, batch([result(1, 'K1', { decision: { [field]: 'first' } })], [], progressAt(10, 0, 1)));
        await w.close();
        const again = await openWriter(url, 'longname');
        await again.write(
          FOLDER,
          batch([result(1, 'K1', { decision: { [field]: 'second' } })], [], progressAt(20, 0, 2)),
        );
        await again.close();
        const cols = [...(await tableColumns(url, 'longname')).keys()];
        expect(cols.filter((c) => c.startsWith('decision_'))).toEqual([col]);
        expect((await tableRows(url, 'longname', 'reference_id')).map((r) => r[col])).toEqual(['second']);
      },
    );

    itDb(dialect)(
      'a later writer finds the plain columns again: a field its batch lacks is written null, not left stale',
      async () => {
        const w = await openWriter(url, 'again');
        await w.write(FOLDER, batch([result(1, 'K1', { d: { a: 1, b: 'x' } })], [], progressAt(10, 0, 1)));
        await w.close();
        const later = await openWriter(url, 'again');
        await later.write(FOLDER, batch([result(1, 'K1', { d: { a: 2 } })], [], progressAt(20, 0, 2)));
        await later.close();
        expect([...(await tableColumns(url, 'again')).keys()].slice(6)).toEqual(['d_a', 'd_b']);
        expect((await tableRows(url, 'again', 'reference_id')).map((r) => [num(r.d_a), r.d_b])).toEqual([[2, null]]);
      },
    );

    itDb(dialect)(
      'a table an earlier bre-batch made with dotted columns is refused before anything, with the statements that fix it',
      async () => {
        const w = await openWriter(url, 'dotted');
        await w.write(
          FOLDER,
          batch([result(1, 'K1', { decision: { decision: 'A', score: 1 } })], [], progressAt(10, 0, 1)),
        );
        await w.close();
        for (const c of ['decision_decision', 'decision_score'])
          await query(url, `ALTER TABLE dotted RENAME COLUMN ${c} TO ${quote(url, c.replace('_', '.'))}`);
        const err = await breError(openWriter(url, 'dotted'));
        expect(err.code).toBe('SINK_TABLE_MISMATCH');
        expect(err.message).toContain('--sink-table');
        const statements = err.message.match(/ALTER TABLE [^;]+;/g) ?? [];
        expect(statements.map((x) => x.replace(/[`"]/g, ''))).toEqual([
          'ALTER TABLE dotted RENAME COLUMN decision.decision TO decision_decision;',
          'ALTER TABLE dotted RENAME COLUMN decision.score TO decision_score;',
        ]);
        for (const x of statements) await query(url, x);
        const fixed = await openWriter(url, 'dotted');
        await fixed.write(
          FOLDER,
          batch([result(2, 'K2', { decision: { decision: 'B', score: 2 } })], [], progressAt(20, 0, 2)),
        );
        await fixed.close();
        expect(
          (await tableRows(url, 'dotted', 'reference_id')).map((r) => [
            r.reference_id,
            r.decision_decision,
            num(r.decision_score),
          ]),
        ).toEqual([
          ['K1', 'A', 1],
          ['K2', 'B', 2],
        ]);
      },
    );
  });
}
