/**
 * The typed columns of the output's tables, one list for every writer: errors.parquet and transactions.parquet
 * (src/output/spool/rebuild.ts) and the sink's NAME_errors and NAME_transactions (src/output/sink/). The results'
 * own columns are found as the run goes (src/output/journal/columns.ts) and typed by the same kinds.
 */
import type { ColumnKind } from '@bre-batch/core/types';

export interface TypedColumn {
  readonly name: string;
  readonly kind: ColumnKind;
}

/**
 * The run that wrote a row and its session (manifest.json's `run_id`, the session's number): the last columns of
 * results.csv, results.parquet and errors.parquet, and fixed columns of the sink's NAME and NAME_errors. Empty
 * for a row an older bre-batch wrote. Transactions have none: a key's transactions are always written with its
 * result line, by the same session, so they are told by joining on the key.
 */
export const PROVENANCE_COLUMNS: readonly TypedColumn[] = [
  { name: 'run_id', kind: 'string' },
  { name: 'run_session', kind: 'int64' },
];

/** transactions.parquet: as transactions.csv, with the source's UTC offset beside the wall-clock timestamp. */
export const TRANSACTION_TABLE: readonly TypedColumn[] = [
  { name: 'key', kind: 'string' },
  { name: 'source', kind: 'string' },
  { name: 'account', kind: 'string' },
  { name: 'txn_id', kind: 'string' },
  { name: 'timestamp', kind: 'timestamp_local_ms' },
  { name: 'timestamp_offset', kind: 'string' },
  { name: 'value_date', kind: 'date' },
  { name: 'type', kind: 'string' },
  { name: 'amount', kind: 'double' },
  { name: 'balance', kind: 'double' },
  { name: 'mode', kind: 'string' },
  { name: 'narration', kind: 'string' },
];

/**
 * errors.parquet: the fields of an errors.ndjson line (./journal.ts ErrorLine), in that order; a sampled run's
 * rows carry their stratum and weight after the key; the run and session that wrote the line come last (new
 * columns: readers by name or by position keep working).
 */
export function errorTableColumns(sampled: boolean): TypedColumn[] {
  return [
    { name: 'row', kind: 'int64' },
    { name: 'line', kind: 'int64' },
    { name: 'key', kind: 'string' },
    ...(sampled ? [{ name: 'stratum', kind: 'string' } as const, { name: 'weight', kind: 'double' } as const] : []),
    ...ERROR_REST,
  ];
}

const ERROR_REST: readonly TypedColumn[] = [
  { name: 'stage', kind: 'string' },
  { name: 'status', kind: 'int64' },
  { name: 'code', kind: 'string' },
  { name: 'message', kind: 'string' },
  { name: 'field', kind: 'string' },
  { name: 'expected', kind: 'string' },
  { name: 'errors', kind: 'json' },
  { name: 'attempts', kind: 'int64' },
  { name: 'input', kind: 'json' },
  ...PROVENANCE_COLUMNS,
];
