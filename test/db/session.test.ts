/** The session of each dialect against the real local servers: values as the run needs them, transactions, losses. */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { dialectOf, openSession, parseDbUrl, type DbSession } from '../../src/db/index.js';
import { freshDatabase, itDb, killConnections, available } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const TABLES = {
  postgres: `CREATE TABLE t (id bigint PRIMARY KEY, amount numeric(20,4), big bigint, d date, ts timestamp, tz timestamptz, j jsonb, flag boolean, ratio double precision, name text)`,
  mysql: `CREATE TABLE t (id bigint PRIMARY KEY, amount decimal(20,4), big bigint, d date, ts datetime(3), tz timestamp NULL, j json, flag boolean, ratio double, name text)`,
} as const;

for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`${dialect} session`, () => {
    let db: DbSession;
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase(dialect);
      db = await openSession(parseDbUrl(url, { flag: 'test' }));
      await db.query(TABLES[dialect]);
      const p = (i: number) => (dialect === 'postgres' ? `$${i}` : '?');
      await db.query(`INSERT INTO t VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(p).join(', ')})`, [
        1,
        '12345678901234.5678',
        '9007199254740993',
        '2024-02-29',
        '2024-03-01 10:20:30.125',
        '2024-03-01 10:20:30',
        JSON.stringify({ a: { b: [1, 2] } }),
        true,
        0.1,
        'Zoë',
      ]);
    });
    afterAll(async () => {
      await db?.close();
    });

    itDb(dialect)('gives exact numbers as text, dates and times as ISO text, JSON as objects', async () => {
      const r = await db.query('SELECT * FROM t');
      expect(r.rows).toHaveLength(1);
      const row = r.rows[0];
      expect(row.amount).toBe('12345678901234.5678');
      expect(row.big).toBe('9007199254740993');
      expect(row.id).toBe('1');
      expect(row.d).toBe('2024-02-29');
      expect(row.ts).toBe(dialect === 'postgres' ? '2024-03-01T10:20:30.125' : '2024-03-01T10:20:30.125');
      expect(String(row.tz)).toMatch(/^2024-03-01T10:20:30(\+00:00)?$/);
      expect(row.j).toEqual({ a: { b: [1, 2] } });
      expect(Boolean(row.flag)).toBe(true);
      expect(row.ratio).toBe(0.1);
      expect(row.name).toBe('Zoë');
      expect(r.columns.map((c) => c.name)).toEqual([
        'id',
        'amount',
        'big',
        'd',
        'ts',
        'tz',
        'j',
        'flag',
        'ratio',
        'name',
      ]);
      expect(r.columns.find((c) => c.name === 'j')?.type).toMatch(/json/);
    });

    itDb(dialect)('rolls a transaction back when its work throws', async () => {
      await expect(
        db.transaction(async () => {
          await db.query(`INSERT INTO t (id, name) VALUES (2, 'x')`);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      const r = await db.query('SELECT count(*) AS n FROM t');
      expect(Number(r.rows[0].n)).toBe(1);
    });

    itDb(dialect)(
      'a killed connection is seen as lost: by `lost` when idle, as a loss by the next statement',
      async () => {
        const other = await openSession(parseDbUrl(url, { flag: 'test' }));
        const name = new URL(url).pathname.slice(1);
        await waitFor(async () => (await killConnections(dialect, name)) >= 1, 10_000, 'the connections killed');
        await other.lost;
        let caught: unknown;
        try {
          await other.query('SELECT 1');
        } catch (err) {
          caught = err;
        }
        expect(caught).toBeDefined();
        expect(dialectOf(other.url).classify(caught), String((caught as { code?: string }).code)).toBe('lost');
        other.destroy();
        // db was killed too: reopen for later tests
        db.destroy();
        db = await openSession(parseDbUrl(url, { flag: 'test' }));
      },
    );

    itDb(dialect)('a server that is not there is DB_UNREACHABLE, naming the URL without a password', async () => {
      const bad = parseDbUrl(`${dialect}://u:pw@127.0.0.1:9/x`, { flag: '--input', passwordAllowed: true });
      const err = (await openSession(bad).catch((e: unknown) => e)) as { code: string; message: string };
      expect(err.code).toBe('DB_UNREACHABLE');
      expect(err.message).toContain(`${dialect}://u@127.0.0.1:9/x`);
      expect(err.message).toMatch(/nothing answers/);
      expect(err.message).not.toContain('pw');
    });
  });
}
