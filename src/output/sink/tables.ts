/**
 * The sink's tables and their fixed columns: NAME (one row per key: the result), NAME_errors (one row per
 * input row that failed), NAME_transactions (an account pipeline's transactions, per key) and the commit table
 * bre_batch_loads (how far each output folder has been written). Result fields become columns as they
 * appear (named by `columnName` here; added by ./schema.ts). Pure: names and shapes only.
 */
import { createHash } from 'node:crypto';
import { BreError } from '../../errors.js';
import type { ColumnKind } from '../../types.js';
import { errorTableColumns, TRANSACTION_TABLE } from '../format/index.js';

/** The comment that marks a table bre-batch created (and so may add columns to); a user's own table is never altered. */
export const OWNED_COMMENT = 'bre-batch sink table (README: Databases): columns are added as fields appear';

/** The commit table: one row per sink table and output folder, written in the same transaction as each batch. */
export const LOADS_TABLE = 'bre_batch_loads';

export interface SinkNames {
  readonly results: string;
  readonly errors: string;
  readonly transactions: string;
}

/** A column the sink writes: its name in the table, the field it comes from and its kind. */
export interface SinkColumn {
  readonly name: string;
  readonly kind: ColumnKind;
}

export function sinkNames(table: string, maxIdentifier: number): SinkNames {
  if (!/^[^\0]+$/.test(table))
    throw new BreError('USAGE', `Expected --sink-table to be a table name, got '${table}'`, { field: 'sink-table' });
  const names = { results: table, errors: `${table}_errors`, transactions: `${table}_transactions` };
  if (Buffer.byteLength(names.transactions) > maxIdentifier) {
    throw new BreError(
      'USAGE',
      `Expected --sink-table to be at most ${maxIdentifier - '_transactions'.length} bytes (the database keeps ${maxIdentifier}, and ${names.transactions} must fit), got '${table}'`,
      { field: 'sink-table' },
    );
  }
  return names;
}

/**
 * A result field's column: a plain name a user types unquoted (`location.decision` to `location_decision`).
 * `stage.field` whose two parts are already lower-case [a-z0-9_] (the stage starting with a letter) gives
 * `stage_field`; anything else (upper case, other characters, more dots, a leading digit), a name in
 * `reserved` (the fixed columns and the key) and a name past the database's limit is lower-cased, every other
 * character made `_`, prefixed `f_` when it would start with a digit, cut to fit and ended with `_` and 8 hex
 * digits of the field's hash. A function of the field alone, so that the same field always gets the same
 * column, whatever other fields a run meets.
 */
export function columnName(header: string, maxIdentifier: number, reserved: ReadonlySet<string> = new Set()): string {
  const dot = header.indexOf('.');
  const plain = dot > 0 && /^[a-z][a-z0-9_]*$/.test(header.slice(0, dot)) && /^[a-z0-9_]+$/.test(header.slice(dot + 1));
  const name = plain
    ? `${header.slice(0, dot)}_${header.slice(dot + 1)}`
    : header.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (plain && name.length <= maxIdentifier && !reserved.has(name)) return name;
  const hash = createHash('sha256').update(header).digest('hex').slice(0, 8);
  const head = /^[0-9]/.test(name) ? `f_${name}` : name;
  return `${head.slice(0, maxIdentifier - 9)}_${hash}`;
}

/** A column an earlier bre-batch named as in results.csv (`stage.field`; shortened ones with `~`): never renamed silently. */
export function isOldColumnName(name: string): boolean {
  return name.includes('.');
}

/** NAME's fixed columns, after the key: the row number, a sample's design, the whole result, when it was written. */
export function resultFixedColumns(sampled: boolean): SinkColumn[] {
  return [
    { name: 'row', kind: 'int64' },
    ...(sampled ? [{ name: 'stratum', kind: 'string' } as const, { name: 'weight', kind: 'double' } as const] : []),
    { name: 'result', kind: 'json' },
    { name: 'loaded_at', kind: 'timestamp_local_ms' },
  ];
}

/** NAME_errors: errors.ndjson's fields, typed as in errors.parquet, the key named as in the input. */
export function errorColumns(key: string, sampled: boolean): SinkColumn[] {
  return [
    ...errorTableColumns(sampled).map((c) => (c.name === 'key' ? { name: key, kind: c.kind } : c)),
    { name: 'loaded_at', kind: 'timestamp_local_ms' },
  ];
}

/** NAME_transactions: transactions.parquet's columns, the key named as in the input, and each one's place in its key's list. */
export function transactionColumns(key: string): SinkColumn[] {
  return [
    { name: key, kind: 'string' },
    { name: 'seq', kind: 'int64' },
    ...TRANSACTION_TABLE.filter((c) => c.name !== 'key'),
  ];
}

/** The widest kind two kinds fit in: integers with fractions are doubles, anything else mixed is text. */
export function widerKind(a: ColumnKind, b: ColumnKind): ColumnKind {
  if (a === b) return a;
  if ((a === 'int64' && b === 'double') || (a === 'double' && b === 'int64')) return 'double';
  return 'string';
}
