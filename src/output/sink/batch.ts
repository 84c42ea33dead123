/**
 * One batch into the sink's tables, in one transaction with the folder's progress in the commit table
 * (exactly once: a batch and the record that it was written commit together or not at all). Upserts by the key
 * make a batch written twice (a retry, a resume, a `load` of the same folder) change nothing. The tables are
 * ./schema.ts's; trying again after a loss is ./writer.ts's.
 */
import type { DbSession } from '../../db/index.js';
import type { NormalisedTransaction } from '@bre-batch/core/types';
import type { ErrorLine } from '@bre-batch/formats';
import { isoOffset } from '../files/parquet/schema.js';
import { LOAD_COLUMNS, type SinkSchema, type Table } from './schema.js';
import { resultFixedColumns, errorColumns, transactionColumns } from './tables.js';
import { sinkValue, sqlTimestamp } from './values.js';

export interface ResultItem {
  readonly row: number;
  readonly key: string;
  readonly stratum?: string;
  readonly weight?: number;
  /** The run and session that wrote the line (absent in an older bre-batch's lines). */
  readonly runId?: string;
  readonly runSession?: number;
  readonly stages: Record<string, Record<string, unknown>>;
  /** `stages` as the journal line has it, when it could be cut from the line (the `result` column's text). */
  readonly stagesText?: string;
  /** The row's transactions (an account pipeline), replacing those its key had. */
  readonly transactions?: readonly NormalisedTransaction[];
}

/** Where one journal has been written up to: its file (./tail.ts fileIdentity) and byte. */
interface JournalMark {
  readonly file: string | null;
  readonly bytes: number;
}

export interface FolderProgress {
  readonly results: JournalMark;
  readonly errors: JournalMark;
  readonly batches: number;
}

export interface SinkBatch {
  readonly results: readonly ResultItem[];
  readonly errors: readonly ErrorLine[];
  /** The folder's progress once this batch is in. */
  readonly progress: FolderProgress;
}

/** A folder, as the commit table names it. */
export interface FolderId {
  readonly id: string;
  readonly host: string;
  readonly path: string;
  /** The folder's run (manifest.json's run_id); null for an older folder that has none. */
  readonly runId: string | null;
}

/** Most rows in one INSERT: fewer when the rows are wide (the bind parameters of one statement are bounded). */
const MAX_STATEMENT_ROWS = 1000;
/** Rows from which the database's bulk way (PostgreSQL's COPY) is worth its extra statements. */
const BULK_MIN_ROWS = 100;

/** Where the commit table says the folder has been written up to; undefined when it never was. */
export async function readProgress(
  session: DbSession,
  s: SinkSchema,
  folder: FolderId,
): Promise<FolderProgress | undefined> {
  const q = (c: string) => s.dialect.quote(c);
  const res = await session.query<Record<string, unknown>>(
    `SELECT ${q('results_file')}, ${q('results_bytes')}, ${q('errors_file')}, ${q('errors_bytes')}, ${q('batches')} FROM ${s.loads.sql} WHERE ${q('sink_table')} = ${s.dialect.param(1)} AND ${q('folder')} = ${s.dialect.param(2)}`,
    [s.sinkName(), folder.id],
  );
  const r = res.rows[0];
  if (!r) return undefined;
  return {
    results: { file: (r.results_file as string | null) ?? null, bytes: Number(r.results_bytes) },
    errors: { file: (r.errors_file as string | null) ?? null, bytes: Number(r.errors_bytes) },
    batches: Number(r.batches),
  };
}

/**
 * The batch's rows (the last of each key, `dedupeBatch`) with the folder's progress, in one transaction; new
 * result fields get their columns first (DDL commits on its own in MySQL, so it stays outside).
 */
/**
 * A job's fence (src/job/fence.ts): inside a batch's transaction, which of its rows may be written (those of
 * chunks the worker still holds), their chunks' positions written in the same transaction.
 */
export interface BatchFence {
  /** Before the batch's transaction begins (its isolation). */
  before(session: DbSession): Promise<void>;
  admit(
    session: DbSession,
    rows: { readonly results: readonly number[]; readonly errors: readonly number[] },
  ): Promise<(row: number) => boolean>;
}

/** Rows written (with a fence, those it admitted). */
export interface Written {
  readonly results: number;
  readonly errors: number;
}

export async function writeBatch(
  session: DbSession,
  s: SinkSchema,
  folder: FolderId,
  all: { readonly results: readonly ResultItem[]; readonly errors: readonly ErrorLine[] },
  progress: FolderProgress,
  fence?: BatchFence,
): Promise<Written> {
  await s.fitColumns(session, all.results);
  await fence?.before(session);
  return session.transaction(async () => {
    // A job's worker writes only the rows of chunks it still holds, checked in this transaction (src/job/fence.ts).
    const may = fence
      ? await fence.admit(session, { results: all.results.map((r) => r.row), errors: all.errors.map((e) => e.row) })
      : undefined;
    const results = may ? all.results.filter((r) => may(r.row)) : all.results;
    const errors = may ? all.errors.filter((e) => may(e.row)) : all.errors;
    await writeResults(session, s, results);
    await writeErrors(session, s, errors);
    await upsert(
      session,
      s,
      s.loads,
      LOAD_COLUMNS.map((c) => c.name),
      ['sink_table', 'folder'],
      [
        [
          s.sinkName(),
          folder.id,
          folder.host,
          folder.path,
          folder.runId,
          progress.results.file,
          progress.results.bytes,
          progress.errors.file,
          progress.errors.bytes,
          progress.batches,
          sqlTimestamp(Date.now()) + s.dialect.sink.instant.zone,
        ],
      ],
    );
    return { results: results.length, errors: errors.length };
  });
}

async function writeResults(session: DbSession, s: SinkSchema, results: readonly ResultItem[]): Promise<void> {
  if (results.length === 0) return;
  const t = s.results;
  const key = s.shape.key;
  const now = sqlTimestamp(Date.now()) + s.dialect.sink.instant.zone;
  const fixed = resultFixedColumns(s.shape.sampled).filter((c) => t.columns.has(c.name) && !s.heldByFields.has(c.name));
  const fields = [...s.fields].filter(([, col]) => t.columns.has(col));
  const columns = [key, ...fixed.map((c) => c.name), ...fields.map(([, col]) => col)];
  const kinds = fields.map(([, col]) => t.columns.get(col)!.kind ?? 'string');
  const stages = fields.map(([header]) => header.slice(0, header.indexOf('.')));
  const names = fields.map(([header]) => header.slice(header.indexOf('.') + 1));
  const rows = results.map((r) => {
    const values: unknown[] = [r.key];
    for (const c of fixed) {
      switch (c.name) {
        case 'row':
          values.push(r.row);
          break;
        case 'stratum':
          values.push(r.stratum ?? null);
          break;
        case 'weight':
          values.push(r.weight ?? null);
          break;
        case 'run_id':
          values.push(r.runId ?? null);
          break;
        case 'run_session':
          values.push(r.runSession ?? null);
          break;
        case 'result':
          values.push(r.stagesText ?? JSON.stringify(r.stages));
          break;
        case 'loaded_at':
          values.push(now);
          break;
      }
    }
    for (let i = 0; i < kinds.length; i += 1) values.push(sinkValue(kinds[i], r.stages[stages[i]]?.[names[i]]));
    return values;
  });
  await upsert(session, s, t, columns, [key], rows);
  // A row that failed before and succeeds now leaves NAME_errors in this same transaction.
  await deleteIn(
    session,
    s,
    s.errors,
    'row',
    results.map((r) => r.row),
  );
  if (s.transactions) await replaceTransactions(session, s, s.transactions, results);
}

async function replaceTransactions(
  session: DbSession,
  s: SinkSchema,
  t: Table,
  results: readonly ResultItem[],
): Promise<void> {
  const key = s.shape.key;
  await deleteIn(
    session,
    s,
    t,
    key,
    results.map((r) => r.key),
  );
  const cols = transactionColumns(key).filter((c) => t.columns.has(c.name));
  const rows: unknown[][] = [];
  for (const r of results) {
    (r.transactions ?? []).forEach((tx, seq) => {
      const record: Record<string, unknown> = {
        ...tx,
        [key]: r.key,
        seq,
        timestamp_offset: tx.timestamp === null ? null : isoOffset(tx.timestamp),
      };
      rows.push(cols.map((c) => (c.name === key ? r.key : sinkValue(c.kind, record[c.name]))));
    });
  }
  await upsert(
    session,
    s,
    t,
    cols.map((c) => c.name),
    [key, 'seq'],
    rows,
  );
}

async function writeErrors(session: DbSession, s: SinkSchema, errors: readonly ErrorLine[]): Promise<void> {
  if (errors.length === 0) return;
  const t = s.errors;
  const now = sqlTimestamp(Date.now()) + s.dialect.sink.instant.zone;
  const cols = errorColumns(s.shape.key, s.shape.sampled).filter((c) => t.columns.has(c.name));
  const rows = errors.map((e) =>
    cols.map((c) => {
      if (c.name === 'loaded_at') return now;
      const v = c.name === s.shape.key ? e.key : (e as Record<string, unknown>)[c.name];
      return sinkValue(t.owned ? c.kind : (t.columns.get(c.name)!.kind ?? c.kind), v);
    }),
  );
  await upsert(
    session,
    s,
    t,
    cols.map((c) => c.name),
    ['row'],
    rows,
  );
}

async function upsert(
  session: DbSession,
  s: SinkSchema,
  t: Table,
  columns: readonly string[],
  key: readonly string[],
  rows: readonly unknown[][],
): Promise<void> {
  if (s.dialect.bulkUpsert && rows.length >= BULK_MIN_ROWS) {
    await s.dialect.bulkUpsert(session, t.sql, columns, key, rows, t.owned);
    return;
  }
  const per = Math.max(1, Math.min(MAX_STATEMENT_ROWS, Math.floor(s.dialect.maxParams / columns.length)));
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    await session.query(s.dialect.sink.upsert(t.sql, columns, key, chunk.length), chunk.flat());
  }
}

async function deleteIn(
  session: DbSession,
  s: SinkSchema,
  t: Table,
  column: string,
  values: readonly unknown[],
): Promise<void> {
  const per = Math.min(MAX_STATEMENT_ROWS * 10, s.dialect.maxParams);
  for (let i = 0; i < values.length; i += per) {
    const chunk = values.slice(i, i + per);
    await session.query(s.dialect.sink.deleteIn(t.sql, column, chunk.length), chunk);
  }
}

/** The last of each key in a batch: one statement may not touch a row twice. */
export function dedupe<T, K>(items: readonly T[], keyOf: (t: T) => K): T[] {
  const seen = new Map<K, T>();
  for (const it of items) {
    const k = keyOf(it);
    seen.delete(k);
    seen.set(k, it);
  }
  return seen.size === items.length ? [...items] : [...seen.values()];
}
