/**
 * MySQL and MariaDB through `mysql2` (its promise API): one connection per session, values as DbRow promises
 * (./session.ts), TLS as the URL decides (./url.ts). The session runs in UTC (time_zone '+00:00') so that a
 * TIMESTAMP reads the same on every host.
 */
import { readFileSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import type { FieldPacket, TypeCastField } from 'mysql2/promise';
import type { Dialect } from './dialect.js';
import { connectFailure, serverCodes, sessionError } from './failure.js';
import { standardKeyset } from './keyset.js';
import { mysqlJob } from './mysql-job.js';
import { standardSink } from './sink-sql.js';
import { SessionBase, type DbColumn, type DbResult } from './session.js';
import type { DbUrl } from './url.js';

/** mysql2's column type numbers (MySQL's protocol) and the names this project reports. */
const TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'decimal',
  1: 'tinyint',
  2: 'smallint',
  3: 'int',
  4: 'float',
  5: 'double',
  7: 'timestamp',
  8: 'bigint',
  9: 'mediumint',
  10: 'date',
  11: 'time',
  12: 'datetime',
  13: 'year',
  15: 'varchar',
  16: 'bit',
  245: 'json',
  246: 'decimal',
  247: 'enum',
  248: 'set',
  249: 'tinyblob',
  250: 'mediumblob',
  251: 'longblob',
  252: 'blob',
  253: 'varchar',
  254: 'char',
};

/** MariaDB stores JSON as LONGTEXT but says so in its extended metadata (10.5+). */
function isJsonField(f: { type?: string | number; extendedFormat?: string; columnType?: number }): boolean {
  return f.type === 'JSON' || f.columnType === 245 || f.extendedFormat === 'json';
}

/**
 * DATE as `YYYY-MM-DD`, DATETIME/TIMESTAMP as ISO text, JSON parsed; DECIMAL and BIGINT come as exact text
 * from `bigNumberStrings`, so they need nothing here.
 */
function typeCast(field: TypeCastField, next: () => unknown): unknown {
  switch (field.type) {
    case 'DATE':
      return field.string();
    case 'DATETIME':
    case 'TIMESTAMP': {
      const v = field.string();
      return v === null ? null : v.replace(' ', 'T');
    }
    default:
      if (isJsonField(field as unknown as { type?: string; extendedFormat?: string })) {
        const v = field.string();
        return v === null ? null : JSON.parse(v);
      }
      return next();
  }
}

function tlsOptions(url: DbUrl): mysql.ConnectionOptions['ssl'] {
  if (url.tls === 'off') return undefined;
  if (url.tls === 'no-verify') return { rejectUnauthorized: false };
  return { rejectUnauthorized: true, ...(url.caFile ? { ca: readFileSync(url.caFile, 'utf8') } : {}) };
}

function columnsOf(fields: FieldPacket[] | undefined): DbColumn[] {
  return (fields ?? []).map((f) => ({
    name: f.name,
    type: isJsonField(f as unknown as { columnType?: number; extendedFormat?: string })
      ? 'json'
      : (TYPE_NAMES[f.columnType ?? f.type ?? -1] ?? `type ${f.columnType ?? f.type}`),
  }));
}

class MysqlSession extends SessionBase {
  constructor(
    url: DbUrl,
    readonly connection: mysql.Connection,
  ) {
    super(url, connection);
  }

  async query<R>(sql: string, params: readonly unknown[] = []): Promise<DbResult<R>> {
    let result: unknown;
    let fields: FieldPacket[] | undefined;
    try {
      [result, fields] = await this.connection.query({ sql, values: params as unknown[] });
    } catch (err) {
      // The server's errors carry an ER_* code; a codeless one is the client's own (a closed connection).
      throw sessionError(err);
    }
    if (Array.isArray(result)) return { rows: result as R[], columns: columnsOf(fields), count: result.length };
    return { rows: [], columns: [], count: (result as { affectedRows?: number }).affectedRows ?? 0 };
  }

  protected rollback(): Promise<unknown> {
    return this.connection.rollback();
  }

  protected end(): Promise<unknown> {
    return this.connection.end();
  }

  protected kill(): void {
    this.connection.destroy();
  }
}

/** Key types MySQL would compare with a text parameter as doubles (exact only to 2^53): cast to DECIMAL instead. */
const EXACT_NUMBER_TYPES = new Set(['decimal', 'tinyint', 'smallint', 'mediumint', 'int', 'bigint', 'year']);

/** mysql2's PROTOCOL_CONNECTION_LOST and the server's own going away. */
const LOST = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
]);

const { classify, serverReason } = serverCodes({
  lost: (code) => LOST.has(code),
  conflict: ['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'],
  exists: ['ER_DUP_FIELDNAME', 'ER_TABLE_EXISTS_ERROR'],
  refusedLogin: ['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR'],
  noDatabase: ['ER_BAD_DB_ERROR'],
});

export const mysqlDialect: Dialect = {
  name: 'mysql',
  label: 'MySQL/MariaDB',
  // MariaDB speaks the MySQL protocol.
  schemes: ['mysql', 'mariadb'],
  defaultPort: 3306,
  // The mysql client's own variable (read in connect below).
  passwordFrom: 'MYSQL_PWD',
  schemas: false,
  foldsUnquoted: false,
  classify,
  maxIdentifier: 64,
  maxParams: 65_535,
  async connect(url) {
    let connection: mysql.Connection;
    try {
      // mysql2, loaded at the first connection: a command or a run without MySQL does not load it.
      const { createConnection } = (await import('mysql2/promise')).default;
      connection = await createConnection({
        host: url.host,
        port: url.port,
        database: url.database,
        user: url.user ?? process.env.USER,
        // The mysql client's own variable; a URL from the environment or an owner-only file may carry it too.
        password: url.password ?? process.env.MYSQL_PWD,
        ssl: tlsOptions(url),
        supportBigNumbers: true,
        bigNumberStrings: true,
        decimalNumbers: false,
        typeCast,
        timezone: 'Z',
        connectTimeout: 10_000,
        multipleStatements: false,
        enableKeepAlive: true,
        charset: 'utf8mb4',
      });
    } catch (err) {
      throw connectFailure(url, 'MySQL/MariaDB', err, serverReason);
    }
    connection.on('error', () => undefined);
    await connection.query("SET time_zone = '+00:00'");
    return new MysqlSession(url, connection);
  },
  quote(identifier) {
    return `\`${identifier.replace(/`/g, '``')}\``;
  },
  table(name, schema) {
    return schema === undefined ? this.quote(name) : `${this.quote(schema)}.${this.quote(name)}`;
  },
  param() {
    return '?';
  },
  // The source's statements. MySQL compares an integer or decimal column with a string as doubles ("Type
  // Conversion in Expression Evaluation"): a bigint key above 2^53 would compare wrongly. DECIMAL(65,30)
  // holds every integer type and every DECIMAL exactly, and the range is still read from the key's index.
  keyset: standardKeyset({
    quote: (id) => mysqlDialect.quote(id),
    table: (name, schema) => mysqlDialect.table(name, schema),
    keyParam: (type) => (EXACT_NUMBER_TYPES.has(type) ? 'CAST(? AS DECIMAL(65,30))' : '?'),
  }),
  // The sink's statements. A primary key cannot be a TEXT column: keys are VARCHAR(255) (1,020 bytes in
  // utf8mb4, within InnoDB's 3,072-byte index limit). MariaDB's JSON is LONGTEXT with a check: both read back.
  sink: standardSink({
    quote: (id) => mysqlDialect.quote(id),
    param: () => '?',
    types: {
      boolean: 'boolean',
      int64: 'bigint',
      double: 'double',
      string: 'longtext',
      json: 'json',
      timestamp_local_ms: 'datetime(3)',
      date: 'date',
    },
    keyType: 'varchar(255)',
    // DATETIME(3) holding UTC, not TIMESTAMP: TIMESTAMP converts through each connection's time_zone on the way in
    // and out (MariaDB takes no offset in the text) and ends in 2038; DATETIME keeps the UTC bre-batch writes.
    instant: { type: 'datetime(3)', zone: '' },
    families: {
      text: ['varchar', 'char', 'text', 'tinytext', 'mediumtext', 'longtext'],
      json: ['json', 'longtext'],
      integer: ['tinyint', 'smallint', 'mediumint', 'int', 'bigint'],
      number: ['decimal', 'float', 'double'],
      boolean: ['boolean', 'bit'],
      timestamp: ['datetime', 'timestamp'],
      date: ['date'],
    },
    onConflict: (key, update) =>
      `ON DUPLICATE KEY UPDATE ${(update.length === 0 ? key : update).map((c) => `${mysqlDialect.quote(c)} = VALUES(${mysqlDialect.quote(c)})`).join(', ')}`,
    tableComment: (_table, comment) => ({ option: `COMMENT='${comment.replace(/'/g, "''")}'` }),
    widen: (table, c) =>
      `ALTER TABLE ${table} MODIFY COLUMN ${mysqlDialect.quote(c.name)} ${c.type}${c.comment ? ` COMMENT ${mysqlLiteral(c.comment)}` : ''}`,
    columnComment: { inline: true },
    // CHANGE renames and sets the comment in one clause (MySQL has no statement for a column's comment alone).
    rename: (table, from, c) =>
      `ALTER TABLE ${table} CHANGE COLUMN ${mysqlDialect.quote(from)} ${mysqlDialect.quote(c.name)} ${c.type}${c.comment ? ` COMMENT ${mysqlLiteral(c.comment)}` : ''}`,
    literal: (text) => mysqlLiteral(text),
    // GET_LOCK's name is at most 64 characters: the caller's is a digest. It gives up after 5 minutes (0).
    lock: (name) => ({ sql: 'SELECT GET_LOCK(?, 300) AS got', params: [name] }),
    unlock: (name) => ({ sql: 'SELECT RELEASE_LOCK(?) AS got', params: [name] }),
    describe: (name, schema) => ({
      // BOOLEAN is TINYINT(1): told apart from a small integer by its column_type.
      sql: `SELECT column_name AS name, CASE WHEN column_type = 'tinyint(1)' THEN 'boolean' ELSE data_type END AS type, is_nullable = 'YES' AS nullable,
              ((column_default IS NOT NULL AND column_default <> 'NULL') OR extra LIKE '%auto_increment%' OR extra LIKE '%GENERATED%') AS has_default,
              NULLIF(column_comment, '') AS comment
            FROM information_schema.columns WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? ORDER BY ordinal_position`,
      params: [schema ?? null, name],
    }),
    uniqueColumns: (name, schema) => ({
      sql: `SELECT MIN(column_name) AS name FROM information_schema.statistics
            WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND non_unique = 0 GROUP BY index_name HAVING COUNT(*) = 1`,
      params: [schema ?? null, name],
    }),
    comment: (name, schema) => ({
      sql: 'SELECT table_comment AS comment FROM information_schema.tables WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?',
      params: [schema ?? null, name],
    }),
  }),
  job: mysqlJob({ quote: (id) => mysqlDialect.quote(id), classify }),
};

/** A string literal: MySQL reads a backslash in one as an escape. */
function mysqlLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
