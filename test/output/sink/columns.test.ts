/**
 * The result columns of bre-batch's own table, against the real local PostgreSQL and MariaDB: every declared
 * field has its column from the first night, null or not, named plainly and commented with its field; a field
 * met later gets its column (a saved query keeps running), a colliding one the suffix; several writers add a
 * field once; a table an earlier release made keeps its hashed columns.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { loadPipeline } from '../../../src/config/pipeline.js';
import { dialectOf, parseDbUrl } from '../../../src/db/index.js';
import { hashedColumnName, reservedNames } from '../../../src/output/sink/tables.js';
import { declaredHeaders } from '../../../src/stages/index.js';
import { ROOT } from '../../helpers/cli.js';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import {
  batch,
  columnComments,
  FOLDER,
  num,
  openWriter,
  progressAt,
  query,
  quote,
  result,
  tableColumns,
  tableRows,
} from '../../helpers/sink.js';

/** Every shipped pipeline (pipelines/*.yaml). */
const SHIPPED = readdirSync(join(ROOT, 'pipelines'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''));

const DECLARED = [
  { header: 'decision.decision', kind: 'string' },
  { header: 'decision.loan_amount', kind: 'double' },
  { header: 'decision.best_offer.loan_amount', kind: 'double' },
  { header: 'decision.repayment_date', kind: 'string' },
  { header: 'aa.account.maskedAccNumber', kind: 'string' },
] as const;

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`result columns on ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect);
    });
    const types =
      dialect === 'postgres' ? { double: 'double precision', text: 'text' } : { double: 'double', text: 'longtext' };

    itDb(dialect)(
      'every declared field has its plain, commented column from the first night, null or not',
      async () => {
        const w = await openWriter(url, 'night', { declared: DECLARED });
        await w.write(
          FOLDER,
          batch([result(1, 'K1', { decision: { decision: 'Reject', loan_amount: null } })], [], progressAt(10, 0, 1)),
        );
        await w.close();
        const cols = await tableColumns(url, 'night');
        expect([...cols]).toEqual(
          expect.arrayContaining([
            ['decision_decision', types.text],
            ['decision_loan_amount', types.double],
            ['decision_best_offer_loan_amount', types.double],
            ['decision_repayment_date', types.text],
            ['aa_account_masked_acc_number', types.text],
          ]),
        );
        expect([...cols.keys()].filter((c) => /_[0-9a-f]{8}$/.test(c))).toEqual([]);
        const comments = await columnComments(url, 'night');
        expect(comments.get('decision_best_offer_loan_amount')).toBe('decision.best_offer.loan_amount');
        expect(comments.get('aa_account_masked_acc_number')).toBe('aa.account.maskedAccNumber');
        // A saved query written after night one.
        const saved = `SELECT ${quote(url, 'decision_decision')}, ${quote(url, 'decision_repayment_date')} FROM ${quote(url, 'night')}`;
        expect(await query(url, saved)).toEqual([{ decision_decision: 'Reject', decision_repayment_date: null }]);
      },
    );

    itDb(dialect)(
      'a second night whose data adds a field adds its column, keeps the earlier rows and the saved query',
      async () => {
        const first = await openWriter(url, 'nights', { declared: DECLARED });
        await first.write(
          FOLDER,
          batch([result(1, 'K1', { decision: { decision: 'Approve', loan_amount: 5000 } })], [], progressAt(10, 0, 1)),
        );
        await first.close();
        const saved = `SELECT ${quote(url, 'decision_loan_amount')} AS amount FROM ${quote(url, 'nights')} ORDER BY ${quote(url, 'row')}`;
        const second = await openWriter(url, 'nights', { declared: DECLARED });
        await second.write(
          FOLDER,
          batch(
            [result(2, 'K2', { decision: { decision: 'Approve', loan_amount: 2500.5, 'geocoding.city': 'Pune' } })],
            [],
            progressAt(20, 0, 2),
          ),
        );
        await second.close();
        expect(second.probe.log.filter((l) => l.includes('geocoding'))).toEqual([
          `sink: new field decision.geocoding.city: column decision_geocoding_city (${types.text}) added to nights`,
        ]);
        // Told once, in the log and in what summary.json's sink.column_changes is made from.
        expect(second.columnChanges).toEqual([
          `new field decision.geocoding.city: column decision_geocoding_city (${types.text}) added to nights`,
        ]);
        expect((await query(url, saved)).map((r) => num(r.amount))).toEqual([5000, 2500.5]);
        const rows = await tableRows(url, 'nights', 'row');
        expect(rows.map((r) => r.decision_geocoding_city)).toEqual([null, 'Pune']);
        expect((await columnComments(url, 'nights')).get('decision_geocoding_city')).toBe('decision.geocoding.city');
      },
    );

    itDb(dialect)(
      "every shipped pipeline's table has a plain column for each of its declared fields before any row",
      async () => {
        for (const p of SHIPPED) {
          const declared = declaredHeaders(loadPipeline(join(ROOT, 'pipelines', `${p}.yaml`)).stages);
          expect(declared.length, p).toBeGreaterThan(0);
          const w = await openWriter(url, `shipped_${p}`, { declared });
          await w.close();
          const comments = await columnComments(url, `shipped_${p}`);
          const byField = new Map([...comments].map(([column, field]) => [field, column]));
          for (const d of declared) {
            const column = byField.get(d.header);
            expect(column, `${p}: ${d.header}`).toBeDefined();
            expect(column, `${p}: ${d.header} has no hash suffix`).not.toMatch(/_[0-9a-f]{8}$/);
          }
        }
      },
    );

    itDb(dialect)('a column that exists keeps its name: the new field that would collide gets the suffix', async () => {
      const w = await openWriter(url, 'collide', { declared: [{ header: 'a.b_c', kind: 'string' }] });
      await w.write(FOLDER, batch([result(1, 'K1', { a: { b_c: 'x' }, a_b: { c: 'y' } })], [], progressAt(10, 0, 1)));
      await w.close();
      const comments = await columnComments(url, 'collide');
      expect(comments.get('a_b_c')).toBe('a.b_c');
      const other = [...comments].find(([, f]) => f === 'a_b.c')![0];
      expect(other).toMatch(/^a_b_c_[0-9a-f]{8}$/);
      // The same again from another writer: the same columns, nothing added.
      const again = await openWriter(url, 'collide', { declared: [{ header: 'a.b_c', kind: 'string' }] });
      await again.write(
        FOLDER,
        batch([result(2, 'K2', { a: { b_c: 'z' }, a_b: { c: 'w' } })], [], progressAt(20, 0, 2)),
      );
      await again.close();
      expect(again.probe.log.filter((l) => l.includes('added'))).toEqual([]);
      const rows = await tableRows(url, 'collide', 'row');
      expect(rows.map((r) => [r.a_b_c, r[other]])).toEqual([
        ['x', 'y'],
        ['z', 'w'],
      ]);
    });

    itDb(dialect)('several writers meeting one new field at once add one column, under the lock', async () => {
      const writers = await Promise.all([0, 1, 2].map(() => openWriter(url, 'race')));
      await Promise.all(
        writers.map((w, i) =>
          w.write(
            { ...FOLDER, id: `${i}`.repeat(32) },
            batch([result(i + 1, `K${i}`, { s: { new_field: i + 0.5, other: i } })], [], progressAt(10, 0, 1)),
          ),
        ),
      );
      await Promise.all(writers.map((w) => w.close()));
      const cols = [...(await tableColumns(url, 'race')).keys()].filter((c) => c.startsWith('s_'));
      expect(cols.sort()).toEqual(['s_new_field', 's_other']);
      expect(writers.flatMap((w) => w.probe.log.filter((l) => l.includes('s.new_field')))).toHaveLength(1);
    });

    itDb(dialect)('a declared column narrower than its values widens, never failing the night', async () => {
      const w = await openWriter(url, 'widen', { declared: [{ header: 'd.count', kind: 'int64' }] });
      await w.write(
        FOLDER,
        batch(
          [result(1, 'K1', { d: { count: 2 } }), result(2, 'K2', { d: { count: 'many' } })],
          [],
          progressAt(10, 0, 1),
        ),
      );
      await w.close();
      expect((await tableColumns(url, 'widen')).get('d_count')).toBe(types.text);
      expect(w.probe.log.some((l) => l.includes('column d_count of widen widened'))).toBe(true);
      expect((await columnComments(url, 'widen')).get('d_count')).toBe('d.count');
    });

    itDb(dialect)(
      'a table an earlier release made keeps its hashed columns: its fields are found in them',
      async () => {
        const maxId = dialectOf(parseDbUrl(url, { flag: 'test' })).maxIdentifier;
        const hashed = hashedColumnName('decision.best_offer.loan_amount', maxId, reservedNames('reference_id'));
        const first = await openWriter(url, 'legacy');
        await first.write(FOLDER, batch([result(1, 'K1', { x: { y: 1 } })], [], progressAt(10, 0, 1)));
        await first.close();
        await query(url, `ALTER TABLE ${quote(url, 'legacy')} ADD COLUMN ${quote(url, hashed)} ${types.double}`);
        const w = await openWriter(url, 'legacy', {
          declared: [{ header: 'decision.best_offer.loan_amount', kind: 'double' }],
        });
        await w.write(
          FOLDER,
          batch([result(2, 'K2', { decision: { 'best_offer.loan_amount': 7.5 } })], [], progressAt(20, 0, 2)),
        );
        await w.close();
        const cols = [...(await tableColumns(url, 'legacy')).keys()];
        expect(cols.filter((c) => c.startsWith('decision_'))).toEqual([hashed]);
        expect((await tableRows(url, 'legacy', 'row')).map((r) => num(r[hashed]))).toEqual([null, 7.5]);
      },
    );
  });
}
