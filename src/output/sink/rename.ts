/**
 * `bre-batch rename-columns`: the result columns of a table an earlier bre-batch made, renamed in place (no copy
 * of a value) to the plain names a run gives today, each with the comment naming its field. A column without a
 * comment is matched to its field through the `result` column of a row that has a value in it: the field whose
 * earlier name (./tables.ts hashedColumnName) is the column's. Under the lock the writers take to change
 * columns; `dryRun` only says the statements.
 */
import { BreError } from '@bre-batch/core/errors';
import { dialectOf, openSession, type DbSession, type Dialect } from '../../db/index.js';
import { describeTable, withColumnsLock, type DescribedTable } from './table-read.js';
import { hashedColumnName, newColumnName, reservedNames, sinkNames, type SinkNames } from './tables.js';
import type { SinkTarget } from './schema.js';

interface ColumnRename {
  readonly from: string;
  readonly to: string;
  /** The field the column holds (`stage.field`), now its comment. */
  readonly field: string;
  readonly statements: readonly string[];
}

export interface RenameResult {
  readonly table: string;
  readonly renames: readonly ColumnRename[];
  /** Columns whose field could not be told (no row has a value in them): left as they are. */
  readonly unknown: readonly string[];
}

export async function renameColumns(target: SinkTarget, dryRun: boolean): Promise<RenameResult> {
  const dialect = dialectOf(target.url);
  const names = sinkNames(target.table, dialect.maxIdentifier);
  const session = await openSession(target.url);
  try {
    const where = `the sink ${dialect.label} at ${target.url.display}`;
    const quoted = { sql: dialect.table(names.results, target.schema), name: names.results };
    return await withColumnsLock(session, dialect, quoted, where, async () => {
      const t = await describeTable(session, dialect, names.results, target.schema);
      refuseNotOurs(t, names, target);
      // The key is the table's primary key: the one unique column that is not a fixed one.
      const fixed = reservedNames('');
      const key = [...t.unique].find((c) => !fixed.has(c)) ?? '';
      const plan = await planRenames(session, dialect, t, key);
      if (!dryRun) {
        // PostgreSQL's DDL is transactional: every rename or none. MySQL commits each on its own (a re-run
        // finishes: a renamed column has its comment and is not matched again).
        const all = plan.renames.flatMap((r) => r.statements);
        if (dialect.name === 'postgres')
          await session.transaction(async () => {
            for (const sql of all) await session.query(sql);
          });
        else for (const sql of all) await session.query(sql);
      }
      return { table: target.schema ? `${target.schema}.${names.results}` : names.results, ...plan };
    });
  } finally {
    await session.close();
  }
}

function refuseNotOurs(t: DescribedTable, names: SinkNames, target: SinkTarget): void {
  if (t.columns.size === 0)
    throw new BreError(
      'USAGE',
      `Expected --sink-table to name a table at ${target.url.display}, got '${names.results}': no such table`,
      {
        field: 'sink-table',
      },
    );
  if (!t.owned)
    throw new BreError(
      'SINK_TABLE_MISMATCH',
      `the sink table ${names.results} at ${target.url.display} was not made by bre-batch: its columns are yours to name, and bre-batch never alters a table it did not create`,
      { field: 'sink-table' },
    );
}

async function planRenames(
  session: DbSession,
  dialect: Dialect,
  t: DescribedTable,
  key: string,
): Promise<Omit<RenameResult, 'table'>> {
  const reserved = reservedNames(key);
  const q = (c: string) => dialect.quote(c);
  const taken = new Set([...reserved, ...t.columns.keys()]);
  const renames: ColumnRename[] = [];
  const unknown: string[] = [];
  for (const [column, info] of t.columns) {
    if (reserved.has(column) || info.comment?.includes('.')) continue;
    const sample = await session.query<{ result: unknown }>(
      `SELECT ${q('result')} AS ${q('result')} FROM ${t.sql} WHERE ${q(column)} IS NOT NULL LIMIT 1`,
    );
    const stages = parseStages(sample.rows[0]?.result);
    const field = Object.entries(stages)
      .flatMap(([stage, fields]) => Object.keys(fields ?? {}).map((f) => `${stage}.${f}`))
      .find((h) => hashedColumnName(h, dialect.maxIdentifier, reserved) === column);
    if (field === undefined) {
      unknown.push(column);
      continue;
    }
    taken.delete(column);
    const to = newColumnName(field, dialect.maxIdentifier, taken);
    taken.add(to);
    const def = { name: to, type: info.kind ? dialect.sink.typeOf(info.kind) : info.type, comment: field };
    const statements =
      to === column ? dialect.sink.commentColumn(t.sql, def) : dialect.sink.renameColumn(t.sql, column, def);
    renames.push({ from: column, to, field, statements });
  }
  return { renames, unknown };
}

function parseStages(v: unknown): Record<string, Record<string, unknown> | null> {
  const parsed = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  return typeof parsed === 'object' && parsed !== null
    ? (parsed as Record<string, Record<string, unknown> | null>)
    : {};
}
