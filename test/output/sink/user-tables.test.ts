/**
 * A sink table the user made (no bre-batch comment), against the real local PostgreSQL and MariaDB: checked
 * before anything is written (SINK_TABLE_MISMATCH naming the table and the fix), written when it fits and
 * never altered, and a field its column cannot hold stops the writing (SINK_REJECTED) with nothing half-written.
 */
import { beforeAll, describe, expect } from 'vitest';
import { available, freshDatabase, itDb } from '../../helpers/db.js';
import {
  batch,
  breError,
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
  tableExists,
  tableRows,
} from '../../helpers/sink.js';

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`a user's own sink table on ${dialect}`, () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect);
    });
    const pg = dialect === 'postgres';
    const KEY = pg ? 'text' : 'varchar(255)';
    const JSON_TYPE = pg ? 'jsonb' : 'json';
    const TS = pg ? 'timestamp(3)' : 'datetime(3)';
    const create = (table: string, defs: string) => query(url, `CREATE TABLE ${quote(url, table)} (${defs})`);
    const q = (id: string) => quote(url, id);

    /** SinkWriter.open's refusal for `table`, checked for what every such message must say. */
    async function mismatch(table: string, named = table): Promise<string> {
      const err = await breError(openWriter(url, table));
      expect(err.code).toBe('SINK_TABLE_MISMATCH');
      expect(err.message).toContain(`the sink table ${named} `);
      expect(err.message).toContain('Fix: ');
      expect(err.message).toContain('never alters a table it did not create');
      return err.message;
    }

    itDb(dialect)('refuses a table without the key column', async () => {
      await create('nokey', `id ${KEY} PRIMARY KEY, ${q('row')} bigint`);
      const m = await mismatch('nokey');
      expect(m).toContain('it has no column reference_id');
      expect(m).toContain(`add the column reference_id (${KEY})`);
    });

    itDb(dialect)('refuses a key column of a type that cannot hold the keys', async () => {
      await create('boolkey', `reference_id boolean PRIMARY KEY`);
      expect(await mismatch('boolkey')).toContain('its column reference_id is boolean, which cannot hold the keys');
    });

    itDb(dialect)('refuses a table with no unique index on the key alone (a composite one is not enough)', async () => {
      await create('nounique', `reference_id ${KEY}, ${q('row')} bigint`);
      expect(await mismatch('nounique')).toContain('ADD PRIMARY KEY (reference_id)');
      await create('composite', `reference_id ${KEY}, ${q('row')} bigint, PRIMARY KEY (reference_id, ${q('row')})`);
      expect(await mismatch('composite')).toContain('no unique index or primary key is on reference_id alone');
    });

    itDb(dialect)('refuses a NOT NULL column without a default that the sink does not write', async () => {
      await create(
        'required',
        `reference_id ${KEY} PRIMARY KEY, owner ${KEY} NOT NULL, team ${KEY} NOT NULL DEFAULT 'risk'`,
      );
      const m = await mismatch('required');
      expect(m).toContain('its column owner is NOT NULL without a default');
      expect(m).not.toContain('team');
    });

    itDb(dialect)(
      'refuses a fixed column of a type that cannot hold it (result as integer, row as boolean)',
      async () => {
        await create('badresult', `reference_id ${KEY} PRIMARY KEY, result integer`);
        const m = await mismatch('badresult');
        expect(m).toContain('its column result is');
        expect(m).toContain('cannot hold JSON objects or arrays');
        expect(m).toContain(`make it ${JSON_TYPE}`);
        await create('badrow', `reference_id ${KEY} PRIMARY KEY, ${q('row')} boolean`);
        expect(await mismatch('badrow')).toContain('its column row is boolean, which cannot hold whole numbers');
      },
    );

    itDb(dialect)("refuses a user's NAME_errors without a unique row", async () => {
      await create('errs_errors', `${q('row')} bigint, reference_id ${KEY}, code ${KEY}`);
      expect(await mismatch('errs', 'errs_errors')).toContain('no unique index or primary key is on row alone');
    });

    itDb(dialect)('refuses a commit table that bre-batch did not make', async () => {
      const other = await freshDatabase(dialect);
      await query(other, `CREATE TABLE bre_batch_loads (sink_table ${KEY}, folder ${KEY})`);
      const err = await breError(openWriter(other, 'anything'));
      expect(err.code).toBe('SINK_TABLE_MISMATCH');
      expect(err.message).toContain('bre_batch_loads is the commit table bre-batch keeps');
    });

    itDb(dialect)('writes a table that fits (typed columns named as in results.csv) and never alters it', async () => {
      await create(
        'good',
        `reference_id ${KEY} PRIMARY KEY, ${q('row')} bigint, result ${JSON_TYPE}, ${q('decision.decision')} ${KEY}, ${q('decision.score')} numeric(12,4), ${q('decision.approved')} boolean, team ${KEY} NOT NULL DEFAULT 'risk'`,
      );
      const before = await tableColumns(url, 'good');
      const w = await openWriter(url, 'good');
      const stages = {
        decision: { decision: 'APPROVE', score: 712.5, approved: true, reasons: ['a', 'b'], extra: 1 },
        other: { x: 'y' },
      };
      await w.write(
        FOLDER,
        batch(
          [result(1, 'K1', stages), result(2, 'K2', { decision: { decision: 'DECLINE', score: 3, approved: false } })],
          [],
          progressAt(100, 0, 1),
        ),
      );
      // Written again with a field less: its column goes null (a key written again is its new result, whole).
      await w.write(FOLDER, batch([result(2, 'K2', { decision: { decision: 'REFER' } })], [], progressAt(150, 0, 2)));
      await w.close();
      expect(await tableColumns(url, 'good')).toEqual(before);
      expect(await tableComment(url, 'good')).toBeNull();
      const rows = await tableRows(url, 'good', 'reference_id');
      expect(
        rows.map((r) => [
          r.reference_id,
          num(r.row),
          r['decision.decision'],
          r['decision.score'] === null ? null : Number(r['decision.score']),
          r['decision.approved'] === null ? null : Boolean(r['decision.approved']),
          r.team,
        ]),
      ).toEqual([
        ['K1', 1, 'APPROVE', 712.5, true, 'risk'],
        ['K2', 2, 'REFER', null, null, 'risk'],
      ]);
      // Fields without a column are in `result`, whole.
      expect(json(rows[0].result)).toEqual(stages);
      // NAME_errors was not there: bre-batch made its own.
      expect(await tableExists(url, 'good_errors')).toBe(true);
    });

    itDb(dialect)('takes a numeric key column (keys from a database whose key is a number)', async () => {
      await create('numkey', `reference_id bigint PRIMARY KEY, ${q('decision.decision')} ${KEY}`);
      const w = await openWriter(url, 'numkey');
      await w.write(
        FOLDER,
        batch(
          [
            result(1, '9007199254740993', { decision: { decision: 'APPROVE' } }),
            result(2, '7', { decision: { decision: 'DECLINE' } }),
          ],
          [],
          progressAt(10, 0, 1),
        ),
      );
      await w.write(
        FOLDER,
        batch([result(1, '9007199254740993', { decision: { decision: 'REFER' } })], [], progressAt(20, 0, 2)),
      );
      await w.close();
      expect(
        (await tableRows(url, 'numkey', 'reference_id')).map((r) => [String(r.reference_id), r['decision.decision']]),
      ).toEqual([
        ['7', 'DECLINE'],
        ['9007199254740993', 'REFER'],
      ]);
    });

    itDb(dialect)(
      "a field whose values the user's column cannot hold: SINK_REJECTED naming the column, nothing of the batch written",
      async () => {
        await create(
          'strict',
          `reference_id ${KEY} PRIMARY KEY, ${q('decision.score')} bigint, ${q('decision.ok')} boolean, loaded_at ${TS}`,
        );
        const w = await openWriter(url, 'strict');
        await w.write(
          FOLDER,
          batch([result(1, 'K1', { decision: { score: 700, ok: true } })], [], progressAt(10, 0, 1)),
        );
        // A fraction into an integer column (MySQL would round it without a word).
        const err = await breError(
          w.write(FOLDER, batch([result(2, 'K2', { decision: { score: 700.5, ok: true } })], [], progressAt(20, 0, 2))),
        );
        expect(err.code).toBe('SINK_REJECTED');
        expect(err.message).toContain('the sink table strict ');
        expect(err.message).toContain('decision.score');
        expect(err.message).toContain('re-run the same command');
        const err2 = await breError(
          w.write(FOLDER, batch([result(3, 'K3', { decision: { score: 1, ok: 'yes' } })], [], progressAt(30, 0, 3))),
        );
        expect(err2.code).toBe('SINK_REJECTED');
        expect(err2.message).toContain('decision.ok');
        expect(await w.progress(FOLDER)).toEqual(progressAt(10, 0, 1));
        await w.close();
        expect(
          (await tableRows(url, 'strict', 'reference_id')).map((r) => [r.reference_id, num(r['decision.score'])]),
        ).toEqual([['K1', 700]]);
      },
    );

    itDb(dialect)(
      'a value the database itself refuses (text longer than a varchar) is SINK_REJECTED, not retried',
      async () => {
        await create('short', `reference_id ${KEY} PRIMARY KEY, ${q('decision.code')} varchar(3)`);
        const w = await openWriter(url, 'short');
        const err = await breError(
          w.write(FOLDER, batch([result(1, 'K1', { decision: { code: 'TOOLONG' } })], [], progressAt(10, 0, 1))),
        );
        expect(err.code).toBe('SINK_REJECTED');
        expect(w.probe.sleeps).toEqual([]);
        expect(await w.progress(FOLDER)).toBeUndefined();
        await w.close();
        expect(await tableRows(url, 'short', 'reference_id')).toEqual([]);
      },
    );
  });
}
