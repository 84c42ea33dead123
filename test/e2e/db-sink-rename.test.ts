/**
 * `bre-batch rename-columns` on PostgreSQL and MariaDB: a table made by the release before the plain names (its
 * result columns hashed, no comments) has them renamed in place, values kept, each commented with its field;
 * `--dry-run` prints the statements and changes nothing; a column no row fills is left and named; a table
 * bre-batch did not make is refused (exit 2).
 */
import { beforeAll, describe, expect } from 'vitest';
import { dialectOf, parseDbUrl } from '../../src/db/index.js';
import { hashedColumnName, OWNED_COMMENT, reservedNames } from '../../src/output/sink/tables.js';
import { spawnCli } from '../helpers/cli.js';
import { available, freshDatabase, itDb } from '../helpers/db.js';
import {
  batch,
  columnComments,
  FOLDER,
  num,
  openWriter,
  progressAt,
  query,
  result,
  tableColumns,
  tableRows,
} from '../helpers/sink.js';

const FIELDS = [
  ['decision.best_offer.loan_amount', 'double', 7.5],
  ['decision.final_decision.ApprovedAmount', 'int64', 3],
  ['decision.decision', 'string', 'Approve'],
  ['decision.never_filled', 'string', null],
] as const;

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`rename-columns on ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect, `bre_e2e_rename_${dialect}`);
    });
    const d = () => dialectOf(parseDbUrl(url, { flag: 'test' }));
    const hashed = (h: string) => hashedColumnName(h, d().maxIdentifier, reservedNames('reference_id'));

    /** The table as the earlier release made it: owned, hashed result columns without comments, two rows. */
    async function legacyTable(name: string): Promise<void> {
      const s = d().sink;
      const cols = [
        { name: 'reference_id', type: s.keyType, notNull: true },
        { name: 'row', type: s.typeOf('int64') },
        { name: 'result', type: s.typeOf('json') },
        { name: 'loaded_at', type: s.instant.type },
        ...FIELDS.map(([h, kind]) => ({ name: hashed(h), type: s.typeOf(kind) })),
      ];
      for (const sql of s.createTable(d().quote(name), cols, ['reference_id'], OWNED_COMMENT)) await query(url, sql);
      const stages = { decision: Object.fromEntries(FIELDS.map(([h, , v]) => [h.slice('decision.'.length), v])) };
      const p = (i: number) => (dialect === 'postgres' ? `$${i}` : '?');
      await query(
        url,
        `INSERT INTO ${d().quote(name)} (${cols.map((c) => d().quote(c.name)).join(', ')}) VALUES (${cols.map((_, i) => p(i + 1)).join(', ')})`,
        ['K1', 1, JSON.stringify(stages), '2026-11-01 00:00:00', ...FIELDS.map(([, , v]) => v)],
      );
    }
    const cli = (...args: string[]) => spawnCli(['rename-columns', '--sink', url, ...args]);

    itDb(dialect)('--dry-run prints each rename and its statements, and changes nothing', async () => {
      await legacyTable('dry');
      const before = [...(await tableColumns(url, 'dry')).keys()];
      const r = await cli('--sink-table', 'dry', '--dry-run');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        `would rename ${hashed('decision.best_offer.loan_amount')} -> decision_best_offer_loan_amount (field decision.best_offer.loan_amount): ALTER TABLE`,
      );
      expect(r.stdout).toContain('dry: 3 columns to rename (nothing changed: --dry-run), 1 left as they are');
      expect([...(await tableColumns(url, 'dry')).keys()]).toEqual(before);
    });

    itDb(dialect)('renames in place: plain names, values kept, each column commented with its field', async () => {
      await legacyTable('legacy');
      const r = await cli('--sink-table', 'legacy');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        `renamed ${hashed('decision.final_decision.ApprovedAmount')} -> decision_final_decision_approved_amount`,
      );
      expect(r.stdout).toContain('legacy: 3 columns renamed in place, 1 left as they are');
      expect(r.stderr).toContain(`${hashed('decision.never_filled')}: no row has a value in it`);
      const [row] = await tableRows(url, 'legacy', 'row');
      expect([
        num(row.decision_best_offer_loan_amount),
        num(row.decision_final_decision_approved_amount),
        row.decision_decision,
      ]).toEqual([7.5, 3, 'Approve']);
      const comments = await columnComments(url, 'legacy');
      expect(comments.get('decision_best_offer_loan_amount')).toBe('decision.best_offer.loan_amount');
      // A run afterwards finds every column by its comment: nothing added, the row updated in place.
      const w = await openWriter(url, 'legacy');
      const stages = {
        decision: { 'best_offer.loan_amount': 9.25, 'final_decision.ApprovedAmount': 4, decision: 'Reject' },
      };
      await w.write(FOLDER, batch([result(1, 'K1', stages)], [], progressAt(10, 0, 1)));
      await w.close();
      // No field's column is added; the columns a row's run and session go in are (the table predates them).
      expect(w.probe.log.filter((l) => l.includes('added'))).toEqual([
        expect.stringMatching(
          /^sink: column run_id \(\w+\), column run_session \(bigint\) added to legacy \(made by an earlier bre-batch\)$/,
        ),
      ]);
      const [after] = await tableRows(url, 'legacy', 'row');
      expect([num(after.decision_best_offer_loan_amount), after.decision_decision]).toEqual([9.25, 'Reject']);
      // Run again: nothing left to rename.
      const again = await cli('--sink-table', 'legacy');
      expect(again.stdout).toContain('legacy: 0 columns renamed in place, 1 left as they are');
    });

    itDb(dialect)('a table bre-batch did not make is refused: exit 2, nothing changed', async () => {
      await query(url, `CREATE TABLE ${d().quote('mine')} (reference_id varchar(20) PRIMARY KEY, x_1234abcd text)`);
      const r = await cli('--sink-table', 'mine');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('the sink table mine at');
      expect(r.stderr).toContain('was not made by bre-batch');
      expect([...(await tableColumns(url, 'mine')).keys()]).toContain('x_1234abcd');
    });
  });
}
