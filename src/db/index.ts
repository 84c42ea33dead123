/**
 * The databases bre-batch reads from and writes to (each dialect is listed here, as stage kinds are in
 * src/stages/index.ts). Callers open a session from a URL and never name a dialect themselves: they ask the
 * URL's dialect what it can do and what an error means.
 */
import { BreError } from '@bre-batch/core/errors';
import type { Dialect } from './dialect.js';
import { mysqlDialect } from './mysql.js';
import { postgres } from './postgres.js';
import type { DbSession } from './session.js';
import { isDbUrlOf, parseDbUrlOf, type DbUrl, type DialectName, type ParseOptions } from './url.js';

/** In the order messages list their schemes. */
const DIALECTS: readonly Dialect[] = [postgres, mysqlDialect];

/** The dialect registered under `name` (a parsed URL's `dialect`). */
export function dialectNamed(name: DialectName): Dialect {
  const d = DIALECTS.find((x) => x.name === name);
  if (!d) throw new BreError('INTERNAL', `no database dialect is named '${name}'`);
  return d;
}

export function dialectOf(url: DbUrl): Dialect {
  return dialectNamed(url.dialect);
}

/** Whether `text` is a database URL (and not a file path): it starts with one of the dialects' schemes. */
export function isDbUrl(text: string): boolean {
  return isDbUrlOf(text, DIALECTS);
}

/** A database URL as the user gives it (./url.ts), for one of the registered dialects. */
export function parseDbUrl(text: string, opts: ParseOptions): DbUrl {
  return parseDbUrlOf(text, opts, DIALECTS);
}

/** One connection; DB_UNREACHABLE (exit 2) naming the URL without its password when it cannot be made. */
export function openSession(url: DbUrl): Promise<DbSession> {
  return dialectOf(url).connect(url);
}

export type { Dialect } from './dialect.js';
export { RANK_COLUMN, COUNT_COLUMN, isOrderableKeyType, type SourceRelation } from './keyset.js';
export type { DbColumn, DbResult, DbRow, DbSession } from './session.js';
export type { TableColumn } from './sink-sql.js';
export type { DbUrl, DialectName } from './url.js';
export { queryReason, ConnectionLost } from './failure.js';
export type { ChunkInsert, JobSql, JobTableNames } from './job-sql.js';
