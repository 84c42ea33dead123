/**
 * The databases bre-batch reads from and writes to, by dialect name (each registers here, as stage kinds do in
 * src/stages/index.ts). Callers open a session from a URL and never name a dialect themselves.
 */
import type { Dialect } from './dialect.js';
import { mysqlDialect } from './mysql.js';
import { postgres } from './postgres.js';
import type { DbSession } from './session.js';
import type { DbUrl, DialectName } from './url.js';

const DIALECTS: Readonly<Record<DialectName, Dialect>> = { postgres, mysql: mysqlDialect };

export function dialectOf(url: DbUrl): Dialect {
  return DIALECTS[url.dialect];
}

/** One connection; DB_UNREACHABLE (exit 2) naming the URL without its password when it cannot be made. */
export function openSession(url: DbUrl): Promise<DbSession> {
  return dialectOf(url).connect(url);
}

export type { Dialect } from './dialect.js';
export { RANK_COLUMN, COUNT_COLUMN, isOrderableKeyType, type SourceRelation } from './keyset.js';
export type { DbColumn, DbResult, DbRow, DbSession } from './session.js';
export type { ColumnDef, SinkSql, TableColumn } from './sink-sql.js';
export { isDbUrl, parseDbUrl, isLoopbackHost, type DbUrl, type DialectName, type TlsMode } from './url.js';
export { connectReason, queryReason, isConnectionLoss, isRetryableConflict, ConnectionLost, CONNECTION_LOST } from './failure.js';
