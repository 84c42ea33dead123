/**
 * The sink's tables and their fixed columns: NAME (one row per key: the result), NAME_errors (one row per
 * input row that failed), NAME_transactions (an account pipeline's transactions, per key) and the commit table
 * bre_batch_loads (how far each output folder has been written). Result fields have columns from the start
 * when their stage kind declares them, and get theirs as they appear otherwise (named here; made by
 * ./schema.ts). Pure: names and shapes only.
 */
import { createHash } from 'node:crypto';
import { BreError } from '@bre-batch/core/errors';
import type { ColumnKind } from '@bre-batch/core/types';
import { errorTableColumns, PROVENANCE_COLUMNS, TRANSACTION_TABLE } from '@bre-batch/formats';

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
 * A result field's plain column name: the snake_case of its path, as a person types it unquoted
 * (`decision.best_offer.loan_amount` to `decision_best_offer_loan_amount`, `account.fipId` to `account_fip_id`):
 * camelCase words split, lower case, every run of other characters one `_`, none at either end, `f_` before a
 * leading digit (`f` for a path with no letter or digit at all).
 */
export function plainColumnName(header: string): string {
  const snake = header
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (snake === '') return 'f';
  return /^[0-9]/.test(snake) ? `f_${snake}` : snake;
}

/**
 * The column a field gets when it has none yet: its plain name, unless a name in `taken` (the table's columns,
 * the key and the fixed columns) has it or it passes the database's limit; then the plain name cut to fit, `_`
 * and 8 hex digits of the field's hash (of the field and a count, in the unlikely case that is taken too).
 * Decided by the field and the names already there alone: a column that exists keeps its name, and the new
 * field that would collide with it is the one that gets the suffix. `taken` is compared lower-cased (MySQL's
 * column names ignore case).
 */
export function newColumnName(header: string, maxIdentifier: number, taken: ReadonlySet<string>): string {
  const plain = plainColumnName(header);
  const free = (name: string) => !taken.has(name) && !taken.has(name.toLowerCase());
  if (plain.length <= maxIdentifier && free(plain)) return plain;
  for (let n = 0; ; n += 1) {
    const hash = createHash('sha256')
      .update(n === 0 ? header : `${header}\0${n}`)
      .digest('hex')
      .slice(0, 8);
    const name = `${plain.slice(0, maxIdentifier - 9)}_${hash}`;
    if (free(name)) return name;
  }
}

/**
 * The columns of the declared fields of a new table, named in the pipeline's order: one that would collide with
 * a name before it (the key, a fixed column, an earlier field's) gets the suffix.
 */
export function declaredColumnNames(
  headers: readonly string[],
  maxIdentifier: number,
  reserved: ReadonlySet<string>,
): string[] {
  const taken = new Set(reserved);
  return headers.map((h) => {
    const name = newColumnName(h, maxIdentifier, taken);
    taken.add(name);
    return name;
  });
}

/**
 * The column the release before the plain names gave a field (`stage_field` when both parts were lower-case
 * [a-z0-9_], else the path sanitised, cut and ended with 8 hex digits of its hash): a table it made keeps
 * those columns, found again by this name, until `bre-batch rename-columns` renames them.
 */
export function hashedColumnName(header: string, maxIdentifier: number, reserved: ReadonlySet<string>): string {
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

/** The names a result field's column may not take: the key and every fixed column of NAME. */
export function reservedNames(key: string): Set<string> {
  return new Set([key, ...resultFixedColumns(true).map((c) => c.name)]);
}

/**
 * NAME's fixed columns, after the key: the row number, a sample's design, the run and session that wrote the row,
 * the whole result, when it was written.
 */
export function resultFixedColumns(sampled: boolean): SinkColumn[] {
  return [
    { name: 'row', kind: 'int64' },
    ...(sampled ? [{ name: 'stratum', kind: 'string' } as const, { name: 'weight', kind: 'double' } as const] : []),
    ...PROVENANCE_COLUMNS,
    { name: 'result', kind: 'json' },
    { name: 'loaded_at', kind: 'timestamp_local_ms' },
  ];
}

/**
 * NAME_errors: errors.ndjson's fields (the run and session that wrote the line among them), typed as in
 * errors.parquet, the key named as in the input.
 */
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
