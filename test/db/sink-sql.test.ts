/**
 * The sink's statements per dialect (src/db/sink-sql.ts and each dialect's `sink:` part): the text of the
 * upserts and DDL, the type families a user's column is judged by; then the catalogue statements (describe,
 * unique columns, comment) against the real local servers, where MySQL's BOOLEAN is TINYINT(1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, parseDbUrl, type DbSession, type Dialect } from '../../src/db/index.js';
import { mysqlDialect } from '../../src/db/mysql.js';
import { postgres } from '../../src/db/postgres.js';
import type { ColumnKind } from '@bre-batch/core/types';
import { available, freshDatabase, itDb } from '../helpers/db.js';

const DIALECTS: Record<'postgres' | 'mysql', Dialect> = { postgres, mysql: mysqlDialect };

describe('upsert', () => {
  it('PostgreSQL: numbered placeholders, one per value, and ON CONFLICT on the key updating every other column', () => {
    const s = postgres.sink.upsert('"t"', ['k', 'a', 'b.c'], ['k'], 3);
    const params = s.match(/\$\d+/g)!;
    expect(params).toHaveLength(9);
    expect(params).toEqual(Array.from({ length: 9 }, (_, i) => `$${i + 1}`));
    expect(s).toContain('INSERT INTO "t" ("k", "a", "b.c") VALUES ($1, $2, $3), ($4, $5, $6), ($7, $8, $9)');
    expect(s).toMatch(/ON CONFLICT \("k"\) DO UPDATE SET "a" = EXCLUDED\."a", "b\.c" = EXCLUDED\."b\.c"$/);
  });

  it('PostgreSQL: a composite key; a row that is all key does nothing on conflict', () => {
    expect(postgres.sink.upsert('"t"', ['k', 'seq', 'x'], ['k', 'seq'], 1)).toMatch(
      /ON CONFLICT \("k", "seq"\) DO UPDATE SET "x" = EXCLUDED\."x"$/,
    );
    expect(postgres.sink.upsert('"t"', ['k'], ['k'], 2)).toMatch(
      /VALUES \(\$1\), \(\$2\) ON CONFLICT \("k"\) DO NOTHING$/,
    );
  });

  it('MySQL: one ? per value, ON DUPLICATE KEY UPDATE with VALUES()', () => {
    const s = mysqlDialect.sink.upsert('`t`', ['k', 'a', 'b.c'], ['k'], 4);
    expect(s.match(/\?/g)).toHaveLength(12);
    expect(s).toContain('INSERT INTO `t` (`k`, `a`, `b.c`) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?), (?, ?, ?)');
    expect(s).toMatch(/ON DUPLICATE KEY UPDATE `a` = VALUES\(`a`\), `b\.c` = VALUES\(`b\.c`\)$/);
    // A row that is all key: MySQL has no DO NOTHING; setting the key to itself is one.
    expect(mysqlDialect.sink.upsert('`t`', ['k'], ['k'], 1)).toMatch(/ON DUPLICATE KEY UPDATE `k` = VALUES\(`k`\)$/);
  });

  it('quotes names with the quote character in them', () => {
    expect(postgres.sink.upsert('"t"', ['k', 'we"ird'], ['k'], 1)).toContain('"we""ird" = EXCLUDED."we""ird"');
    expect(mysqlDialect.sink.upsert('`t`', ['k', 'we`ird'], ['k'], 1)).toContain('`we``ird` = VALUES(`we``ird`)');
  });

  it.each([
    ['postgres', /\$\d+/g],
    ['mysql', /\?/g],
  ] as const)('%s: deleteIn has one placeholder per value', (d, re) => {
    const s = DIALECTS[d].sink.deleteIn('t', 'row', 5);
    expect(s.match(re)).toHaveLength(5);
    expect(s).toMatch(/^DELETE FROM t WHERE .row. IN \(/);
  });
});

describe('DDL', () => {
  const cols = [
    { name: 'k', type: 'text', notNull: true },
    { name: 'row', type: 'bigint' },
  ];
  it('PostgreSQL: the table with its primary key, then COMMENT ON (an apostrophe doubled)', () => {
    const [create, comment, ...rest] = postgres.sink.createTable('"s"."t"', cols, ['k'], "bre-batch's table");
    expect(rest).toEqual([]);
    expect(create).toBe('CREATE TABLE IF NOT EXISTS "s"."t" ("k" text NOT NULL, "row" bigint, PRIMARY KEY ("k"))');
    expect(comment).toBe(`COMMENT ON TABLE "s"."t" IS 'bre-batch''s table'`);
  });

  it('MySQL: the comment is a table option of the one statement', () => {
    const out = mysqlDialect.sink.createTable('`t`', cols, ['k', 'row'], "it's");
    expect(out).toEqual([
      "CREATE TABLE IF NOT EXISTS `t` (`k` text NOT NULL, `row` bigint, PRIMARY KEY (`k`, `row`)) COMMENT='it''s'",
    ]);
  });

  it("each column's comment: PostgreSQL by statements in the same list, MySQL in the column's definition", () => {
    const commented = [
      { name: 'k', type: 'text', notNull: true },
      { name: 'd_loan_amount', type: 'double', comment: 'd.loan_amount' },
    ];
    expect(postgres.sink.createTable('"t"', commented, ['k'], 'c').slice(2)).toEqual([
      `COMMENT ON COLUMN "t"."d_loan_amount" IS 'd.loan_amount'`,
    ]);
    expect(mysqlDialect.sink.createTable('`t`', commented, ['k'], 'c')).toEqual([
      "CREATE TABLE IF NOT EXISTS `t` (`k` text NOT NULL, `d_loan_amount` double COMMENT 'd.loan_amount', PRIMARY KEY (`k`)) COMMENT='c'",
    ]);
  });

  it('adds and widens a column', () => {
    expect(postgres.sink.addColumn('"t"', { name: 'a.b', type: 'bigint' })).toEqual([
      'ALTER TABLE "t" ADD COLUMN "a.b" bigint',
    ]);
    expect(postgres.sink.addColumn('"t"', { name: 'a_b', type: 'bigint', comment: "a.b's" })).toEqual([
      'ALTER TABLE "t" ADD COLUMN "a_b" bigint',
      `COMMENT ON COLUMN "t"."a_b" IS 'a.b''s'`,
    ]);
    expect(postgres.sink.widenColumn('"t"', { name: 'a.b', type: 'double precision' })).toBe(
      'ALTER TABLE "t" ALTER COLUMN "a.b" TYPE double precision USING "a.b"::double precision',
    );
    expect(mysqlDialect.sink.addColumn('`t`', { name: 'a.b', type: 'bigint' })).toEqual([
      'ALTER TABLE `t` ADD COLUMN `a.b` bigint',
    ]);
    expect(mysqlDialect.sink.addColumn('`t`', { name: 'a_b', type: 'bigint', comment: "a.b's \\" })).toEqual([
      "ALTER TABLE `t` ADD COLUMN `a_b` bigint COMMENT 'a.b''s \\\\'",
    ]);
    // MySQL's MODIFY would drop the comment: it is said again.
    expect(mysqlDialect.sink.widenColumn('`t`', { name: 'a_b', type: 'double', comment: 'a.b' })).toBe(
      "ALTER TABLE `t` MODIFY COLUMN `a_b` double COMMENT 'a.b'",
    );
  });

  it('renames a column in place, its comment set', () => {
    expect(postgres.sink.renameColumn('"t"', 'a_b_1234abcd', { name: 'a_b', type: 'text', comment: 'a.b' })).toEqual([
      'ALTER TABLE "t" RENAME COLUMN "a_b_1234abcd" TO "a_b"',
      `COMMENT ON COLUMN "t"."a_b" IS 'a.b'`,
    ]);
    expect(
      mysqlDialect.sink.renameColumn('`t`', 'a_b_1234abcd', { name: 'a_b', type: 'longtext', comment: 'a.b' }),
    ).toEqual(["ALTER TABLE `t` CHANGE COLUMN `a_b_1234abcd` `a_b` longtext COMMENT 'a.b'"]);
  });
});

describe('types', () => {
  const KINDS: readonly ColumnKind[] = ['boolean', 'int64', 'double', 'string', 'json', 'timestamp_local_ms', 'date'];

  it('each kind has the type a results.parquet reader would expect', () => {
    expect(KINDS.map((k) => postgres.sink.typeOf(k))).toEqual([
      'boolean',
      'bigint',
      'double precision',
      'text',
      'jsonb',
      'timestamp(3)',
      'date',
    ]);
    expect(KINDS.map((k) => mysqlDialect.sink.typeOf(k))).toEqual([
      'boolean',
      'bigint',
      'double',
      'longtext',
      'json',
      'datetime(3)',
      'date',
    ]);
    expect(postgres.sink.keyType).toBe('text');
    // A primary key cannot be TEXT in MySQL.
    expect(mysqlDialect.sink.keyType).toBe('varchar(255)');
  });

  // [type as information_schema names it, the kinds it holds, the kind it is written with, a key type?]
  const PG: readonly [string, readonly ColumnKind[], ColumnKind | undefined, boolean][] = [
    ['text', KINDS, 'string', true],
    ['character varying', KINDS, 'string', true],
    ['character', KINDS, 'string', true],
    ['jsonb', ['json'], 'json', false],
    ['json', ['json'], 'json', false],
    ['boolean', ['boolean'], 'boolean', false],
    ['smallint', ['int64'], 'int64', true],
    ['integer', ['int64'], 'int64', true],
    ['bigint', ['int64'], 'int64', true],
    ['numeric', ['int64', 'double'], 'double', true],
    ['real', ['int64', 'double'], 'double', false],
    ['double precision', ['int64', 'double'], 'double', false],
    ['timestamp without time zone', ['timestamp_local_ms', 'date'], 'timestamp_local_ms', false],
    ['timestamp with time zone', ['timestamp_local_ms', 'date'], 'timestamp_local_ms', false],
    ['date', ['date'], 'date', false],
    ['uuid', [], undefined, false],
    ['bytea', [], undefined, false],
  ];
  const MY: readonly [string, readonly ColumnKind[], ColumnKind | undefined, boolean][] = [
    ['varchar', KINDS, 'string', true],
    ['char', KINDS, 'string', true],
    ['text', KINDS, 'string', true],
    ['mediumtext', KINDS, 'string', true],
    // MariaDB's JSON is LONGTEXT: text, and it takes JSON.
    ['longtext', KINDS, 'string', true],
    ['json', ['json'], 'json', false],
    // describe's name for TINYINT(1), which BOOLEAN is.
    ['boolean', ['boolean'], 'boolean', false],
    ['bit', ['boolean'], 'boolean', false],
    ['tinyint', ['int64'], 'int64', true],
    ['int', ['int64'], 'int64', true],
    ['bigint', ['int64'], 'int64', true],
    ['decimal', ['int64', 'double'], 'double', true],
    ['float', ['int64', 'double'], 'double', false],
    ['double', ['int64', 'double'], 'double', false],
    ['datetime', ['timestamp_local_ms', 'date'], 'timestamp_local_ms', false],
    ['timestamp', ['timestamp_local_ms', 'date'], 'timestamp_local_ms', false],
    ['date', ['date'], 'date', false],
    ['blob', [], undefined, false],
  ];

  describe.each([
    ['postgres', PG],
    ['mysql', MY],
  ] as const)('%s families', (d, table) => {
    const sink = DIALECTS[d].sink;
    it.each(table)('%s', (type, holds, kind, key) => {
      expect(KINDS.filter((k) => sink.holds(type, k))).toEqual(holds);
      expect(sink.kindOf(type)).toBe(kind);
      expect(sink.isKeyType(type)).toBe(key);
      // information_schema may say it in capitals.
      expect(sink.kindOf(type.toUpperCase())).toBe(kind);
    });
  });

  it('every type bre-batch creates is read back as the kind it was made for (a table it made is judged by what it made)', () => {
    for (const d of [postgres, mysqlDialect]) {
      for (const k of KINDS) {
        const made = d.sink.typeOf(k).replace(/\(\d+\)$/, '');
        const described =
          { timestamp: 'timestamp without time zone', 'double precision': 'double precision' }[made as 'timestamp'] ??
          made;
        expect(d.sink.holds(described, k), `${d.name} ${described} holds ${k}`).toBe(true);
      }
    }
  });
});

/** The catalogue statements, run: what the writer learns about a table it finds. */
for (const dialect of ['postgres', 'mysql'] as const) {
  describe.runIf(available[dialect] || process.env.CI === 'true')(`${dialect} catalogue statements`, () => {
    const d = DIALECTS[dialect];
    let db: DbSession;
    const run = async <R>(s: { sql: string; params: readonly unknown[] }) => (await db.query<R>(s.sql, s.params)).rows;

    beforeAll(async () => {
      db = await openSession(parseDbUrl(await freshDatabase(dialect), { flag: 'test' }));
      const pg = dialect === 'postgres';
      await db.query(
        `CREATE TABLE ${d.quote('u')} (id ${pg ? 'text' : 'varchar(40)'} NOT NULL, flag boolean, small tinyint_placeholder, n bigint NOT NULL DEFAULT 0, j ${pg ? 'jsonb' : 'json'}, ts ${pg ? 'timestamp(3)' : 'datetime(3)'}, a int, b int, PRIMARY KEY (id), UNIQUE (a, b))`.replace(
          'tinyint_placeholder',
          pg ? 'smallint' : 'tinyint(4)',
        ),
      );
      await db.query(`CREATE UNIQUE INDEX u_flag ON ${d.quote('u')} (n)`);
      for (const s of d.sink.createTable(
        d.quote('owned'),
        [{ name: 'k', type: d.sink.keyType, notNull: true }],
        ['k'],
        "bre-batch's",
      ))
        await db.query(s);
    });
    afterAll(async () => {
      await db?.close();
    });

    itDb(dialect)(
      'describe: the columns in order, typed (MySQL BOOLEAN as boolean, TINYINT(4) as tinyint), nullability and defaults',
      async () => {
        const rows = await run<{ name: string; type: string; nullable: unknown; has_default: unknown }>(
          d.sink.describe('u', undefined),
        );
        const truthy = (v: unknown) => v === true || v === 1 || v === '1';
        expect(
          rows.map((r) => [r.name, String(r.type).toLowerCase(), truthy(r.nullable), truthy(r.has_default)]),
        ).toEqual(
          dialect === 'postgres'
            ? [
                ['id', 'text', false, false],
                ['flag', 'boolean', true, false],
                ['small', 'smallint', true, false],
                ['n', 'bigint', false, true],
                ['j', 'jsonb', true, false],
                ['ts', 'timestamp without time zone', true, false],
                ['a', 'integer', true, false],
                ['b', 'integer', true, false],
              ]
            : [
                ['id', 'varchar', false, false],
                ['flag', 'boolean', true, false],
                ['small', 'tinyint', true, false],
                ['n', 'bigint', false, true],
                // MariaDB: JSON is LONGTEXT.
                ['j', expect.stringMatching(/^(json|longtext)$/), true, false],
                ['ts', 'datetime', true, false],
                ['a', 'int', true, false],
                ['b', 'int', true, false],
              ],
        );
        expect(d.sink.kindOf(String(rows[1].type))).toBe('boolean');
        expect(d.sink.kindOf(String(rows[2].type))).toBe('int64');
        expect(await run(d.sink.describe('absent', undefined))).toEqual([]);
      },
    );

    itDb(dialect)(
      'uniqueColumns: the columns that alone make a unique index (not those of a composite one)',
      async () => {
        const rows = await run<{ name: string }>(d.sink.uniqueColumns('u', undefined));
        expect(rows.map((r) => r.name).sort()).toEqual(['id', 'n']);
      },
    );

    itDb(dialect)("comment: the owned table's comment as written; a table without one has none", async () => {
      expect((await run<{ comment: string | null }>(d.sink.comment('owned', undefined)))[0].comment).toBe(
        "bre-batch's",
      );
      const none = (await run<{ comment: string | null }>(d.sink.comment('u', undefined)))[0].comment;
      expect(none === null || none === '').toBe(true);
    });
  });
}
