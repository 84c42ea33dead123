/**
 * PostgreSQL through node-postgres (`pg`): one Client per session, values parsed as DbRow promises
 * (./session.ts), TLS as the URL decides (./url.ts). The session runs in UTC so that a timestamptz reads the
 * same on every host.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { BreError } from '@bre-batch/core/errors';
import type { Dialect } from './dialect.js';
import { connectFailure, serverCodes, sessionError } from './failure.js';
import { standardKeyset } from './keyset.js';
import { copyUpsert } from './pg-copy.js';
import { pgJob } from './pg-job.js';
import { standardSink } from './sink-sql.js';
import { SessionBase, type DbColumn, type DbResult, type DbSession } from './session.js';
import type { DbUrl } from './url.js';

/** Type names of the OIDs a row is likely to hold (pg_type.typname); others are looked up once. */
const OID_NAMES: Readonly<Record<number, string>> = {
  16: 'boolean',
  17: 'bytea',
  18: 'char',
  19: 'name',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  25: 'text',
  26: 'oid',
  114: 'json',
  700: 'real',
  701: 'double precision',
  1042: 'character',
  1043: 'character varying',
  1082: 'date',
  1083: 'time',
  1114: 'timestamp',
  1184: 'timestamptz',
  1186: 'interval',
  1266: 'timetz',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
};

const text = (v: string): string => v;
/** `2024-03-01 10:00:00.5` -> `2024-03-01T10:00:00.5` */
const isoLocal = (v: string): string => v.replace(' ', 'T');
/** `2024-03-01 10:00:00+00` -> `2024-03-01T10:00:00+00:00` */
const isoOffset = (v: string): string => v.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00');

/** node-postgres, loaded at the first connection: a command or a run without PostgreSQL does not load it. */
const driver = async (): Promise<typeof pg> => (await import('pg')).default;

/** Exact text for numeric and int8, ISO text for dates and timestamps; the driver's own parsers for the rest. */
const typeParsers = (types: typeof pg.types): pg.CustomTypesConfig => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    switch (oid) {
      case 20:
      case 1700:
      case 1082:
        return text;
      case 1114:
        return isoLocal;
      case 1184:
        return isoOffset;
      default:
        return types.getTypeParser(oid, format as 'text');
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
});

function tlsOptions(url: DbUrl): pg.ClientConfig['ssl'] {
  if (url.tls === 'off') return false;
  if (url.tls === 'no-verify') return { rejectUnauthorized: false };
  return {
    rejectUnauthorized: true,
    ...(url.caFile ? { ca: readFileSync(url.caFile, 'utf8') } : {}),
    servername: url.host,
  };
}

class PgSession extends SessionBase {
  constructor(
    url: DbUrl,
    readonly client: pg.Client,
  ) {
    super(url, client);
  }

  async query<R>(sql: string, params: readonly unknown[] = []): Promise<DbResult<R>> {
    let res: pg.QueryResult;
    try {
      res = await this.client.query({ text: sql, values: params as unknown[] });
    } catch (err) {
      throw sessionError(err);
    }
    const columns: DbColumn[] = (res.fields ?? []).map((f) => ({
      name: f.name,
      type: OID_NAMES[f.dataTypeID] ?? `oid ${f.dataTypeID}`,
    }));
    return { rows: res.rows as R[], columns, count: res.rowCount ?? res.rows.length };
  }

  protected rollback(): Promise<unknown> {
    return this.client.query('ROLLBACK');
  }

  protected end(): Promise<unknown> {
    return this.client.end();
  }

  protected kill(): void {
    // end() waits for the server; a broken connection may never answer, so the socket goes too.
    (this.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    void this.client.end().catch(() => undefined);
  }
}

/** SQLSTATE's words. */
const { classify, serverReason } = serverCodes({
  // Class 08 (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now), 25P03 (the
  // session ended for idling in a transaction: a job's worker stopped inside its batch, src/job/fence.ts).
  lost: (code) => /^08/.test(code) || /^57P0[123]$/.test(code) || code === '25P03',
  // serialization_failure, deadlock_detected
  conflict: ['40001', '40P01'],
  // duplicate_column, duplicate_table, duplicate_object
  exists: ['42701', '42P07', '42710'],
  // invalid_password, invalid_authorization_specification
  refusedLogin: ['28P01', '28000'],
  // invalid_catalog_name
  noDatabase: ['3D000'],
});

export const postgres: Dialect = {
  name: 'postgres',
  label: 'PostgreSQL',
  schemes: ['postgres', 'postgresql'],
  defaultPort: 5432,
  // As libpq reads them: node-postgres does the same when the URL has no password.
  passwordFrom: 'PGPASSWORD or ~/.pgpass',
  schemas: true,
  foldsUnquoted: true,
  classify,
  maxIdentifier: 63,
  maxParams: 65_535,
  async connect(url) {
    // No password in the URL: pg reads PGPASSWORD, then ~/.pgpass, as libpq does.
    const pgLib = await driver();
    const client = new pgLib.Client({
      host: url.host,
      port: url.port,
      database: url.database,
      user: url.user,
      password: url.password,
      ssl: tlsOptions(url),
      types: typeParsers(pgLib.types),
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      application_name: 'bre-batch',
      options: '-c TimeZone=UTC',
    });
    // Errors before connect() settles are reported by connect() itself.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      await client.end().catch(() => undefined);
      throw connectFailure(url, 'PostgreSQL', err, serverReason);
    }
    return new PgSession(url, client);
  },
  quote(identifier) {
    return `"${identifier.replace(/"/g, '""')}"`;
  },
  table(name, schema) {
    return schema === undefined ? this.quote(name) : `${this.quote(schema)}.${this.quote(name)}`;
  },
  param(i) {
    return `$${i}`;
  },
  // The source's statements. An untyped parameter takes the type of the key it is compared with: bigint
  // and numeric keys compare as numbers, text keys in the column's collation.
  keyset: standardKeyset({
    quote: (id) => postgres.quote(id),
    table: (name, schema) => postgres.table(name, schema),
    keyParam: () => '$1',
  }),
  // The sink's statements. A table is found by its quoted name through to_regclass, as the planner would.
  sink: standardSink({
    quote: (id) => postgres.quote(id),
    param: (i) => `$${i}`,
    types: {
      boolean: 'boolean',
      int64: 'bigint',
      double: 'double precision',
      string: 'text',
      json: 'jsonb',
      timestamp_local_ms: 'timestamp(3)',
      date: 'date',
    },
    keyType: 'text',
    // An instant, shown in each reader's time zone; the zone in the text keeps the session's TimeZone out of it.
    instant: { type: 'timestamptz(3)', zone: '+00' },
    families: {
      text: ['text', 'character varying', 'character'],
      json: ['json', 'jsonb'],
      integer: ['smallint', 'integer', 'bigint'],
      number: ['numeric', 'real', 'double precision'],
      boolean: ['boolean'],
      timestamp: ['timestamp without time zone', 'timestamp with time zone'],
      date: ['date'],
    },
    onConflict: (key, update) =>
      `ON CONFLICT (${key.map((k) => postgres.quote(k)).join(', ')}) ${update.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${update.map((c) => `${postgres.quote(c)} = EXCLUDED.${postgres.quote(c)}`).join(', ')}`}`,
    tableComment: (table, comment) => ({ statement: `COMMENT ON TABLE ${table} IS '${comment.replace(/'/g, "''")}'` }),
    widen: (table, c) =>
      `ALTER TABLE ${table} ALTER COLUMN ${postgres.quote(c.name)} TYPE ${c.type} USING ${postgres.quote(c.name)}::${c.type}`,
    columnComment: {
      statement: (table, column, comment) =>
        `COMMENT ON COLUMN ${table}.${postgres.quote(column)} IS '${comment.replace(/'/g, "''")}'`,
    },
    rename: (table, from, c) =>
      `ALTER TABLE ${table} RENAME COLUMN ${postgres.quote(from)} TO ${postgres.quote(c.name)}`,
    literal: (text) => `'${text.replace(/'/g, "''")}'`,
    // One lock per table, whatever the schema it is named from; hashtextextended (PostgreSQL 11) gives the bigint key.
    lock: (name) => ({ sql: 'SELECT pg_advisory_lock(hashtextextended($1, 0)) IS NOT NULL AS got', params: [name] }),
    unlock: (name) => ({ sql: 'SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS got', params: [name] }),
    // information_schema's ordinal_position is the column's attnum, which col_description takes.
    describe: (name, schema) => ({
      sql: `SELECT column_name AS name, data_type AS type, is_nullable = 'YES' AS nullable, (column_default IS NOT NULL OR is_identity = 'YES' OR is_generated = 'ALWAYS') AS has_default,
              col_description(to_regclass($3), ordinal_position::int) AS comment
            FROM information_schema.columns WHERE table_schema = COALESCE($1::text, current_schema()) AND table_name = $2 ORDER BY ordinal_position`,
      params: [schema ?? null, name, postgres.table(name, schema)],
    }),
    uniqueColumns: (name, schema) => ({
      sql: `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
            WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL`,
      params: [postgres.table(name, schema)],
    }),
    comment: (name, schema) => ({
      sql: `SELECT obj_description(to_regclass($1), 'pg_class') AS comment`,
      params: [postgres.table(name, schema)],
    }),
  }),
  job: pgJob({ quote: (id) => postgres.quote(id), table: (name, schema) => postgres.table(name, schema), classify }),
  bulkUpsert: (session, table, columns, key, rows, likelyNew) =>
    copyUpsert(
      pgClientOf(session),
      {
        table,
        columns,
        quote: (id) => postgres.quote(id),
        upsertFrom: (source) => postgres.sink.upsertFrom(table, source, columns, key),
        likelyNew,
      },
      rows,
    ),
};

/** The pg Client of a session this dialect opened (for COPY and cursors, which only it knows). */
export function pgClientOf(session: DbSession): pg.Client {
  if (!(session instanceof PgSession)) throw new BreError('INTERNAL', 'not a PostgreSQL session');
  return session.client;
}
