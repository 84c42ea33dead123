/**
 * The database source against the real local servers (src/input/db/source.ts): key order, NULL and duplicate
 * keys as row errors across page boundaries, exact big keys, the database's collation, a resume's start, the
 * header check's refusals, and a source that goes away (killed connections; a proxy of the test's own that
 * stops answering) and comes back or does not.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { parseDbUrl, type DialectName } from '../../../src/db/index.js';
import { DbSource, type DbSourceOptions } from '../../../src/input/db/index.js';
import { resolveHeader } from '@bre-batch/formats/input/header';
import type { InputRow } from '@bre-batch/core/types';
import { adminSession, available, freshDatabase, itDb, killConnections } from '../../helpers/db.js';
import { loadRows, sql } from '../../helpers/db-load.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { waitFor } from '../../helpers/wait.js';

/** Connections to `database` other than the one asking. */
async function connectionsTo(dialect: DialectName, database: string): Promise<number> {
  const admin = await adminSession(dialect);
  try {
    const r =
      dialect === 'postgres'
        ? await admin.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [database],
          )
        : await admin.query<{ n: string }>(
            'SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE db = ? AND id <> CONNECTION_ID()',
            [database],
          );
    return Number(r.rows[0].n);
  } finally {
    await admin.close();
  }
}

async function readAll(src: DbSource, start?: { row: number; key: string | null }): Promise<InputRow[]> {
  const out: InputRow[] = [];
  for await (const batch of src.rows(start)) out.push(...batch);
  return out;
}

/** `row:key` with `!M`/`!D` for MISSING_KEY/DUPLICATE_KEY and `|` for the last row of a key. */
function shape(rows: readonly InputRow[]): string[] {
  return rows.map(
    (r) => `${r.row}:${r.sourceKey}${r.groupEnd ? '|' : ''}${r.readError ? `!${r.readError.code[0]}` : ''}`,
  );
}

for (const dialect of ['postgres', 'mysql'] as const satisfies readonly DialectName[]) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`${dialect} source`, () => {
    let url: string;
    const open = (opts: Partial<DbSourceOptions> & Pick<DbSourceOptions, 'relation'>, at = url) =>
      DbSource.open({ url: parseDbUrl(at, { flag: '--input' }), key: 'reference_id', ...opts });

    beforeAll(async () => {
      url = await freshDatabase(dialect, 'bre_src');
      // Keys with a NULL pair and runs of duplicates placed so that small pages end inside them.
      const keys = ['k01', null, 'k02', 'k02', 'k03', 'k04', 'k04', 'k04', 'k05', 'k06', null, 'k07', 'k07', 'k08'];
      await loadRows(
        url,
        'dups',
        keys.map((k, i) => ({ reference_id: k, n: i, doc: { a: { b: i } } })),
      );
      const big = Array.from({ length: 12 }, (_, i) => ({ reference_id: String(9007199254740990n + BigInt(i)), v: i }));
      await loadRows(url, 'big', big, { types: { reference_id: 'bigint' } });
      await loadRows(
        url,
        'cased',
        ['abc', 'ABC', 'abd', 'Abe'].map((k) => ({ reference_id: k })),
      );
      await loadRows(
        url,
        'manyrows',
        Array.from({ length: 60 }, (_, i) => ({ reference_id: `r${String(i).padStart(3, '0')}`, v: i })),
      );
    });

    const expectedDups = [
      '1:null!M',
      '2:null|!M',
      '3:k01|',
      '4:k02!D',
      '5:k02|!D',
      '6:k03|',
      '7:k04!D',
      '8:k04!D',
      '9:k04|!D',
      '10:k05|',
      '11:k06|',
      '12:k07!D',
      '13:k07|!D',
      '14:k08|',
    ];

    itDb(dialect).each([1, 2, 3, 4, 1000])(
      'page of %i rows: NULL keys first, then key order; a duplicated key is an error on every row, a page never splits it',
      async (pageRows) => {
        const src = await open({ relation: { kind: 'table', name: 'dups' }, pageRows });
        try {
          const rows = await readAll(src);
          expect(shape(rows)).toEqual(expectedDups);
          expect(rows[0].readError).toMatchObject({
            code: 'MISSING_KEY',
            field: 'reference_id',
            expected: 'a value in reference_id',
          });
          expect(rows[3].readError).toMatchObject({
            code: 'DUPLICATE_KEY',
            field: 'reference_id',
            expected: 'one row per reference_id',
          });
          expect(rows[3].readError!.message).toMatch(/2 rows of the input have reference_id 'k02'/);
          // JSON comes as objects, as NDJSON's nested fields do.
          expect(rows[2].data.doc).toEqual({ a: { b: 0 } });
          expect(src.stats).toMatchObject({ startedAfterRow: 0, rowsRead: 14, reconnects: 0 });
        } finally {
          await src.close();
        }
      },
    );

    itDb(dialect)('a resume starts after its key, numbering on, and reads nothing before it', async () => {
      const src = await open({ relation: { kind: 'table', name: 'dups' }, pageRows: 2 });
      try {
        expect(shape(await readAll(src, { row: 9, key: 'k04' }))).toEqual(expectedDups.slice(9));
        expect(shape(await readAll(src, { row: 2, key: null }))).toEqual(expectedDups.slice(2));
        expect(src.stats.startedAfterRow).toBe(2);
      } finally {
        await src.close();
      }
    });

    itDb(dialect)(
      "with the most rows wanted (a job's chunk), it reads that many and no page ahead; a key is not split",
      async () => {
        const src = await open({ relation: { kind: 'table', name: 'manyrows' } });
        const dups = await open({ relation: { kind: 'table', name: 'dups' } });
        try {
          const read = async (s: DbSource, start: { row: number; key: string | null } | undefined, most: number) => {
            const out: InputRow[] = [];
            for await (const batch of s.rows(start, most)) out.push(...batch);
            return out;
          };
          const some = await read(src, { row: 10, key: 'r009' }, 15);
          expect(some.map((r) => r.row)).toEqual(Array.from({ length: 15 }, (_, i) => 11 + i));
          expect(src.stats.rowsRead).toBe(15);
          // From the start: the NULL keys count among the rows wanted.
          expect(shape(await read(dups, undefined, 3))).toEqual(expectedDups.slice(0, 3));
          expect(dups.stats.rowsRead).toBe(3);
          // One row wanted where a key has three: the key's rows come whole.
          expect(shape(await read(dups, { row: 6, key: 'k03' }, 1))).toEqual(expectedDups.slice(6, 9));
        } finally {
          await src.close();
          await dups.close();
        }
      },
    );

    itDb(dialect)('bigint keys past 2^53 page exactly (compared as numbers, not doubles)', async () => {
      const src = await open({ relation: { kind: 'table', name: 'big' }, pageRows: 3 });
      try {
        const rows = await readAll(src);
        expect(rows.map((r) => r.sourceKey)).toEqual(
          Array.from({ length: 12 }, (_, i) => String(9007199254740990n + BigInt(i))),
        );
        expect(rows.every((r) => !r.readError)).toBe(true);
        const after = await readAll(src, { row: 4, key: '9007199254740993' });
        expect(after[0]).toMatchObject({ row: 5, sourceKey: '9007199254740994' });
      } finally {
        await src.close();
      }
    });

    itDb(dialect)('decimal keys page as numbers (9.5 before 10.25 before 100), dates as dates', async () => {
      await loadRows(
        url,
        'deckeys',
        ['100', '9.5', '10.25', '-3', '9.50001'].map((k, i) => ({ reference_id: k, d: `2026-0${i + 1}-01` })),
        { types: { reference_id: 'decimal(12,5)', d: 'date' } },
      );
      const src = await open({ relation: { kind: 'table', name: 'deckeys' }, pageRows: 1 });
      try {
        expect((await readAll(src)).map((r) => r.sourceKey)).toEqual([
          '-3.00000',
          '9.50000',
          '9.50001',
          '10.25000',
          '100.00000',
        ]);
        expect((await readAll(src, { row: 2, key: '9.50000' })).map((r) => r.row)).toEqual([3, 4, 5]);
      } finally {
        await src.close();
      }
      const byDate = await open({
        relation: { kind: 'query', sql: 'SELECT d AS reference_id FROM deckeys' },
        pageRows: 2,
      });
      try {
        const rows = await readAll(byDate);
        expect(rows.map((r) => r.sourceKey)).toEqual([
          '2026-01-01',
          '2026-02-01',
          '2026-03-01',
          '2026-04-01',
          '2026-05-01',
        ]);
        expect((await readAll(byDate, { row: 3, key: '2026-03-01' })).map((r) => r.sourceKey)).toEqual([
          '2026-04-01',
          '2026-05-01',
        ]);
      } finally {
        await byDate.close();
      }
    });

    itDb(dialect)("text keys compare in the database's collation", async () => {
      const src = await open({ relation: { kind: 'table', name: 'cased' }, pageRows: 1 });
      try {
        const rows = await readAll(src);
        if (dialect === 'mysql') {
          // MariaDB's default collation ignores case: abc and ABC are one key, so both are errors.
          expect(
            rows.filter((r) => r.readError?.code === 'DUPLICATE_KEY').map((r) => String(r.sourceKey).toLowerCase()),
          ).toEqual(['abc', 'abc']);
          expect(rows).toHaveLength(4);
        } else {
          expect(rows.every((r) => !r.readError)).toBe(true);
          expect(new Set(rows.map((r) => r.sourceKey))).toEqual(new Set(['abc', 'ABC', 'abd', 'Abe']));
        }
      } finally {
        await src.close();
      }
    });

    itDb(dialect)('a query is read the same way, and counted', async () => {
      const src = await open({
        relation: { kind: 'query', sql: 'SELECT reference_id, n FROM dups WHERE n >= 3;' },
        pageRows: 2,
      });
      try {
        expect(shape(await readAll(src))).toEqual([
          '1:null|!M',
          '2:k02|',
          '3:k03|',
          '4:k04!D',
          '5:k04!D',
          '6:k04|!D',
          '7:k05|',
          '8:k06|',
          '9:k07!D',
          '10:k07|!D',
          '11:k08|',
        ]);
        expect(await src.count()).toBe(11);
      } finally {
        await src.close();
      }
    });

    itDb(dialect)(
      "the header check renames columns to the pipeline's spelling and refuses what cannot be read by key",
      async () => {
        await sql(
          url,
          dialect === 'postgres'
            ? 'CREATE TABLE upper_case ("Reference_ID" varchar(20), "Latitude" numeric(8,4))'
            : 'CREATE TABLE upper_case (Reference_ID varchar(20), Latitude numeric(8,4))',
        );
        await sql(url, "INSERT INTO upper_case VALUES ('a', 1.5)");
        const req = {
          what: "pipeline 'x'",
          required: [['reference_id'], ['latitude']],
          known: ['reference_id', 'latitude'],
        };
        const src = await open({
          relation: { kind: 'table', name: 'upper_case' },
          header: (h) => resolveHeader(h, req),
        });
        try {
          const [row] = await readAll(src);
          expect(Object.keys(row.data)).toEqual(['reference_id', 'latitude']);
          expect(row.data.latitude).toBe('1.5000');
        } finally {
          await src.close();
        }
        const missing = await open({
          relation: { kind: 'table', name: 'big' },
          header: (h) => resolveHeader(h, req),
        }).catch((e: unknown) => e);
        expect(missing).toMatchObject({ code: 'INPUT_HEADER', message: expect.stringMatching(/missing: latitude/) });
        const noKey = await open({ relation: { kind: 'query', sql: 'SELECT v FROM big' } }).catch((e: unknown) => e);
        expect(noKey).toMatchObject({
          code: 'INPUT_HEADER',
          message: expect.stringMatching(/Expected the query SELECT v FROM big to have the key column 'reference_id'/),
        });
        const jsonKey = await open({ relation: { kind: 'query', sql: 'SELECT doc AS reference_id FROM dups' } }).catch(
          (e: unknown) => e,
        );
        expect(jsonKey).toMatchObject({
          code: 'INPUT_HEADER',
          message: expect.stringMatching(/to be text, a number, a date or a uuid, got json/),
        });
      },
    );

    itDb(dialect)(
      'a table that does not exist and a query with a syntax error are DB_QUERY_FAILED, naming them',
      async () => {
        const table = await open({ relation: { kind: 'table', name: 'nope' } }).catch((e: unknown) => e);
        expect(table).toMatchObject({
          code: 'DB_QUERY_FAILED',
          message: expect.stringMatching(/cannot read table nope from .*\/bre_src_/),
        });
        const query = await open({ relation: { kind: 'query', sql: 'SELEC * FROM big' } }).catch((e: unknown) => e);
        expect(query).toMatchObject({
          code: 'DB_QUERY_FAILED',
          message: expect.stringMatching(/cannot read the query SELEC \* FROM big .*(syntax|42601|ER_PARSE_ERROR)/),
        });
      },
    );

    itDb(dialect)('connections killed between pages: it connects again and reads every row once', async () => {
      const src = await open({ relation: { kind: 'table', name: 'manyrows' }, pageRows: 5 });
      const name = new URL(url).pathname.slice(1);
      const rows: InputRow[] = [];
      try {
        for await (const batch of src.rows()) {
          rows.push(...batch);
          if (rows.length === 10)
            await waitFor(
              async () => (await killConnections(dialect, name)) >= 1,
              10_000,
              'the source connection killed',
            );
        }
      } finally {
        await src.close();
      }
      expect(rows.map((r) => r.row)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(rows.map((r) => r.data.v)).toEqual(Array.from({ length: 60 }, (_, i) => String(i)));
      expect(src.stats.reconnects).toBeGreaterThanOrEqual(1);
    });

    itDb(dialect)(
      'the count and a page finding the connection gone together open one new connection, and close leaves none',
      async () => {
        const src = await open({ relation: { kind: 'table', name: 'manyrows' }, pageRows: 5 });
        const name = new URL(url).pathname.slice(1);
        const rows = src.rows();
        await rows.next();
        await waitFor(async () => (await killConnections(dialect, name)) >= 1, 10_000, 'the source connection killed');
        const [count, rest] = await Promise.all([
          src.count(),
          (async () => {
            let n = 5;
            for (let r = await rows.next(); !r.done; r = await rows.next()) n += r.value.length;
            return n;
          })(),
        ]);
        expect(count).toBe(60);
        expect(rest).toBe(60);
        expect(src.stats.reconnects).toBe(1);
        await src.close();
        // No connection of the source is left open (a closed one may take a moment to leave the server's list).
        await waitFor(
          async () => (await connectionsTo(dialect, name)) === 0,
          10_000,
          'no connection left to the database',
        );
      },
    );

    describe('through a proxy that goes away', () => {
      let proxy: TcpProxy;
      let proxied: string;
      beforeAll(async () => {
        const u = new URL(url);
        proxy = await startTcpProxy(u.hostname, Number(u.port));
        u.port = String(proxy.port);
        proxied = u.href;
      });
      afterAll(async () => proxy?.close());

      itDb(dialect)(
        'back within --input-retry: the read carries on; away for longer: SOURCE_UNAVAILABLE naming it',
        async () => {
          const notices: string[] = [];
          let sleeps = 0;
          const src = await open(
            {
              relation: { kind: 'table', name: 'manyrows' },
              pageRows: 5,
              retryForMs: 60_000,
              notice: (l) => notices.push(l),
              // The proxy comes back after the third try: decided by attempts, not by the clock.
              sleep: async () => {
                sleeps += 1;
                if (sleeps === 3) await proxy.up();
              },
            },
            proxied,
          );
          const rows: InputRow[] = [];
          try {
            for await (const batch of src.rows()) {
              rows.push(...batch);
              if (rows.length === 20) await proxy.down();
            }
          } finally {
            await src.close();
          }
          expect(rows.map((r) => r.row)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
          expect(sleeps).toBeGreaterThanOrEqual(3);
          expect(notices.some((l) => /went away .*connecting again, for up to 60 s/.test(l))).toBe(true);
          expect(notices.some((l) => /is back/.test(l))).toBe(true);

          const gone = await open(
            {
              relation: { kind: 'table', name: 'manyrows' },
              pageRows: 5,
              retryForMs: 300,
              sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
            },
            proxied,
          );
          const err = await (async () => {
            let n = 0;
            for await (const batch of gone.rows()) {
              n += batch.length;
              if (n === 10) await proxy.down();
            }
          })().catch((e: unknown) => e);
          await gone.close();
          await proxy.up();
          expect(err).toMatchObject({
            code: 'SOURCE_UNAVAILABLE',
            message: expect.stringMatching(
              /went away and did not come back within 300 ms \(table manyrows at .*\): .*re-run the same command to resume/,
            ),
          });
        },
      );

      itDb(dialect)(
        'a connection that stops answering without closing is taken for lost after the statement time-out',
        async () => {
          const notices: string[] = [];
          const src = await open(
            {
              relation: { kind: 'table', name: 'manyrows' },
              pageRows: 5,
              statementTimeoutMs: 500,
              notice: (l) => notices.push(l),
              sleep: async () => undefined,
            },
            proxied,
          );
          const rows: InputRow[] = [];
          try {
            for await (const batch of src.rows()) {
              rows.push(...batch);
              if (rows.length === 20) proxy.stall();
            }
          } finally {
            await src.close();
          }
          expect(rows.map((r) => r.row)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
          expect(src.stats.reconnects).toBe(1);
          expect(notices.join('\n')).toMatch(/the input database went away \(.*no answer within 500 ms\)/);
        },
      );
    });
  });
}
