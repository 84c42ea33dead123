/**
 * What differs between databases, behind one interface (the shape of dlt's destinations): its URLs, what it can
 * do (schemas, case folding), connecting, what its errors mean, quoting, parameters, and the SQL the source,
 * the sink and a job's store need. One file per database implements it (./postgres.ts, ./mysql.ts) and is
 * listed in ./index.ts; adding another database is that file and its tests: nothing outside it names a dialect.
 */
import type { JobSql } from './job-sql.js';
import type { KeysetSql } from './keyset.js';
import type { SinkSql } from './sink-sql.js';
import type { DbSession } from './session.js';
import type { Failure } from './failure.js';
import type { DbUrl, DialectAddress } from './url.js';

export interface Dialect extends DialectAddress {
  /** For messages: `PostgreSQL`, `MySQL/MariaDB`. */
  readonly label: string;
  /**
   * Whether a table may live in a schema apart from the URL's database (PostgreSQL: yes, --sink-schema;
   * MySQL: a schema is a database).
   */
  readonly schemas: boolean;
  /** Whether an unquoted identifier is folded to lower case, as the database does (PostgreSQL; MySQL keeps it). */
  readonly foldsUnquoted: boolean;
  /** What a failed statement's error means (./failure.ts Failure): the server's codes are the dialect's to read. */
  classify(err: unknown): Failure;
  /** Opens one connection; a failure is a BreError DB_UNREACHABLE naming the URL (without its password). */
  connect(url: DbUrl): Promise<DbSession>;
  /** An identifier (table, column), quoted for this database. */
  quote(identifier: string): string;
  /** `schema.table` quoted, the schema only when given. */
  table(name: string, schema?: string): string;
  /** The placeholder of the i-th parameter (from 1): `$1` or `?`. */
  param(i: number): string;
  /** Longest identifier the database keeps (63 bytes for PostgreSQL, 64 characters for MySQL). */
  readonly maxIdentifier: number;
  /** Most bind parameters in one statement (65,535 for both, by their wire protocols). */
  readonly maxParams: number;

  // The source (src/input/db/): reading a table or a query in key order.
  /** The statements of a keyset reader (./keyset.ts). */
  readonly keyset: KeysetSql;

  // The sink (src/output/sink/): creating, checking and upserting its tables.
  readonly sink: SinkSql;

  // A job shared by several hosts (src/job/): its tables, its claims, its clock.
  readonly job: JobSql;
  /**
   * Upserts many rows at once faster than `sink.upsert`'s multi-row statements, where the database has a way
   * (PostgreSQL: COPY, ./pg-copy.ts); the same result. `likelyNew`: the table is bre-batch's own and its rows
   * most likely new keys (a way that is faster then may be tried first). Inside the caller's transaction.
   */
  readonly bulkUpsert?: (
    session: DbSession,
    table: string,
    columns: readonly string[],
    key: readonly string[],
    rows: readonly (readonly unknown[])[],
    likelyNew: boolean,
  ) => Promise<void>;
}
