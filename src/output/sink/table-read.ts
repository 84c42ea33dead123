/**
 * A sink table as the database has it (its columns with their types and comments, whether bre-batch made it,
 * its unique columns), and the lock under which the sink's writers change its columns one at a time. Shared
 * by ./schema.ts (a run's and a load's tables) and ./rename.ts (`bre-batch rename-columns`).
 */
import { createHash } from 'node:crypto';
import { BreError } from '@bre-batch/core/errors';
import type { DbSession, Dialect, TableColumn } from '../../db/index.js';
import type { ColumnKind } from '@bre-batch/core/types';
import { OWNED_COMMENT } from './tables.js';

/** A column as the table has it: its SQL type, the kind values are written with, and its comment. */
interface TableColumnInfo {
  readonly type: string;
  readonly kind: ColumnKind | undefined;
  readonly comment: string | null;
}

export interface Table {
  /** Quoted, schema and all. */
  readonly sql: string;
  readonly name: string;
  readonly owned: boolean;
  /** Its columns by name: their SQL type, the kind values are written with, and comment. */
  readonly columns: Map<string, TableColumnInfo>;
}

export interface DescribedTable extends Table {
  readonly unique: Set<string>;
  readonly notNullWithoutDefault: string[];
}

/** The table as it is; no columns when it does not exist. */
export async function describeTable(
  session: DbSession,
  dialect: Dialect,
  name: string,
  schema: string | undefined,
): Promise<DescribedTable> {
  const d = dialect.sink.describe(name, schema);
  const rows = (
    await session.query<{ name: string; type: string; nullable: unknown; has_default: unknown; comment: unknown }>(
      d.sql,
      d.params,
    )
  ).rows;
  const columns = new Map<string, TableColumnInfo>();
  const described: TableColumn[] = rows.map((r) => ({
    name: r.name,
    type: String(r.type).toLowerCase(),
    nullable: truthy(r.nullable),
    hasDefault: truthy(r.has_default),
    comment: typeof r.comment === 'string' && r.comment !== '' ? r.comment : null,
  }));
  for (const c of described)
    columns.set(c.name, { type: c.type, kind: dialect.sink.kindOf(c.type), comment: c.comment });
  let owned = false;
  const unique = new Set<string>();
  if (columns.size > 0) {
    const c = dialect.sink.comment(name, schema);
    owned = (await session.query<{ comment: string | null }>(c.sql, c.params)).rows[0]?.comment === OWNED_COMMENT;
    const u = dialect.sink.uniqueColumns(name, schema);
    for (const r of (await session.query<{ name: string }>(u.sql, u.params)).rows) unique.add(r.name);
  }
  return {
    sql: dialect.table(name, schema),
    name,
    owned,
    columns,
    unique,
    notNullWithoutDefault: described.filter((c) => !c.nullable && !c.hasDefault).map((c) => c.name),
  };
}

/** The name of the lock on a table's columns (`table` as the statements name it, quoted): one per table. */
export function columnsLockName(table: string): string {
  return `bre-batch columns ${createHash('sha256').update(table).digest('hex').slice(0, 40)}`;
}

/**
 * `work` holding the database-wide lock on the columns of `table` (PostgreSQL's advisory lock, MySQL's
 * GET_LOCK), outside any transaction: several workers or shards writing one table change its columns one at a
 * time, each deciding against the table as it is once it holds the lock. The lock goes with the connection.
 */
export async function withColumnsLock<T>(
  session: DbSession,
  dialect: Dialect,
  table: { readonly sql: string; readonly name: string },
  where: string,
  work: () => Promise<T>,
): Promise<T> {
  const name = columnsLockName(table.sql);
  const lock = dialect.sink.lock(name);
  const got = (await session.query<{ got: unknown }>(lock.sql, lock.params)).rows[0]?.got;
  if (!truthy(got))
    throw new BreError(
      'DB_QUERY_FAILED',
      `${where}: another bre-batch has held the lock on the columns of ${table.name} for 5 minutes; re-run the same command to resume`,
    );
  try {
    return await work();
  } finally {
    const unlock = dialect.sink.unlock(name);
    await session.query(unlock.sql, unlock.params).catch(() => undefined);
  }
}

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't';
}

export function describeKind(kind: ColumnKind): string {
  switch (kind) {
    case 'boolean':
      return 'true/false values';
    case 'int64':
      return 'whole numbers';
    case 'double':
      return 'numbers with fractions';
    case 'string':
      return 'text';
    case 'json':
      return 'JSON objects or arrays';
    case 'timestamp_local_ms':
      return 'timestamps';
    case 'date':
      return 'dates';
  }
}
