/**
 * The database sink's library tests (test/output/sink/): a writer on a test database, the rows and columns
 * of its tables read back as comparable values (MySQL's booleans are 1/0, MariaDB's JSON is text), journal
 * lines in the run's exact format, and a sleep that does not wait (the writer's backoff is not under test).
 */
import { openSession, parseDbUrl, type DialectName } from '../../src/db/index.js';
import { dialectOf } from '../../src/db/index.js';
import { isBreError, type BreError } from '@bre-batch/core/errors';
import type { ErrorLine } from '@bre-batch/formats';
import { SinkWriter, type FolderId, type SinkShape, type SinkTarget } from '../../src/output/sink/index.js';
import type { FolderProgress, ResultItem, SinkBatch } from '../../src/output/sink/writer.js';

export const SHAPE: SinkShape = { key: 'reference_id', sampled: false, transactions: false };

export function sinkTarget(url: string, table: string, retryForMs = 60_000): SinkTarget {
  return { url: parseDbUrl(url, { flag: '--sink' }), table, retryForMs };
}

/** What a writer logged and how long it was asked to sleep between tries. */
export interface WriterProbe {
  readonly log: string[];
  readonly sleeps: number[];
}

/** A writer whose backoff sleeps are recorded and end at once (a turn of the event loop). */
export async function openWriter(
  url: string,
  table: string,
  shape: Partial<SinkShape> = {},
  retryForMs = 60_000,
): Promise<SinkWriter & { probe: WriterProbe }> {
  const probe: WriterProbe = { log: [], sleeps: [] };
  const w = await SinkWriter.open(
    sinkTarget(url, table, retryForMs),
    { ...SHAPE, ...shape },
    (l) => probe.log.push(l),
    async (ms) => {
      probe.sleeps.push(ms);
      await new Promise((r) => setImmediate(r));
    },
  );
  return Object.assign(w, { probe });
}

function dialectName(url: string): DialectName {
  return parseDbUrl(url, { flag: 'test' }).dialect;
}

export function quote(url: string, id: string): string {
  return dialectOf(parseDbUrl(url, { flag: 'test' })).quote(id);
}

/** Rows of a statement on the database at `url`. */
export async function query<R = Record<string, unknown>>(
  url: string,
  text: string,
  params: readonly unknown[] = [],
): Promise<R[]> {
  const session = await openSession(parseDbUrl(url, { flag: 'test' }));
  try {
    return (await session.query<R>(text, params)).rows;
  } finally {
    await session.close();
  }
}

/** Every row of a table, ordered by `order`. */
export function tableRows(url: string, table: string, order: string): Promise<Record<string, unknown>[]> {
  return query(
    url,
    `SELECT * FROM ${quote(url, table)} ORDER BY ${order
      .split(',')
      .map((c) => quote(url, c.trim()))
      .join(', ')}`,
  );
}

/** A table's columns and their data types (information_schema, lower case), in order. */
export async function tableColumns(url: string, table: string): Promise<Map<string, string>> {
  const rows =
    dialectName(url) === 'postgres'
      ? await query<{ name: string; type: string }>(
          url,
          `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
          [table],
        )
      : await query<{ name: string; type: string }>(
          url,
          `SELECT column_name AS name, CASE WHEN column_type = 'tinyint(1)' THEN 'boolean' ELSE data_type END AS type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
          [table],
        );
  return new Map(rows.map((r) => [r.name, String(r.type).toLowerCase()]));
}

/** A table's columns that have a comment, and the comment (the field a result column holds). */
export async function columnComments(url: string, table: string): Promise<Map<string, string>> {
  const d = dialectOf(parseDbUrl(url, { flag: 'test' })).sink.describe(table, undefined);
  const rows = await query<{ name: string; comment: string | null }>(url, d.sql, d.params);
  return new Map(rows.filter((r) => r.comment).map((r) => [r.name, String(r.comment)]));
}

/** The table's comment (null when none or empty). */
export async function tableComment(url: string, table: string): Promise<string | null> {
  const s = dialectOf(parseDbUrl(url, { flag: 'test' })).sink.comment(table, undefined);
  const c = (await query<{ comment: string | null }>(url, s.sql, s.params))[0]?.comment ?? null;
  return c === '' ? null : c;
}

export async function tableExists(url: string, table: string): Promise<boolean> {
  return (await tableColumns(url, table)).size > 0;
}

/** A boolean as either database gives it back. */
export const bool = (v: unknown): boolean | null => (v === null ? null : v === true || v === 1 || v === '1');
/** JSON as either database gives it back (MariaDB's JSON is LONGTEXT: text). */
export const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
/** A number as either database gives it back (bigint as exact text). */
export const num = (v: unknown): number | null => (v === null ? null : Number(v));

export const FOLDER: FolderId = { id: 'f'.repeat(32), host: 'test-host', path: '/tmp/out', runId: 'run-test' };

export function progressAt(
  results: number,
  errors: number,
  batches: number,
  files = { results: '1:100', errors: '1:101' },
): FolderProgress {
  return { results: { file: files.results, bytes: results }, errors: { file: files.errors, bytes: errors }, batches };
}

export function result(
  row: number,
  key: string,
  stages: Record<string, Record<string, unknown>>,
  extra: Partial<ResultItem> = {},
): ResultItem {
  return { row, key, stages, ...extra };
}

export function errorLine(
  row: number,
  key: string | null,
  code = 'HTTP_ERROR',
  extra: Partial<ErrorLine> = {},
): ErrorLine {
  return {
    row,
    line: row + 1,
    key,
    stage: 'decision',
    status: 503,
    code,
    message: `row ${row} failed`,
    attempts: 3,
    input: { reference_id: key },
    ...extra,
  };
}

export function batch(
  results: readonly ResultItem[],
  errors: readonly ErrorLine[],
  progress: FolderProgress,
): SinkBatch {
  return { results, errors, progress };
}

/** The BreError a promise rejects with (a test fails when it resolves or rejects with something else). */
export async function breError(p: Promise<unknown>): Promise<BreError> {
  try {
    await p;
  } catch (err) {
    if (isBreError(err)) return err;
    throw err;
  }
  throw new Error('expected a BreError, but it resolved');
}
