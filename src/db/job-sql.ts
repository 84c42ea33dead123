/**
 * What a job's store (src/job/) needs of a database beyond standard SQL, each dialect its own way
 * (./pg-job.ts, ./mysql-job.ts): its tables and indexes, its clock and lease arithmetic, the insert of a new
 * job and of its chunks, and the claim of a chunk. Every other statement of the job is written once, with `$n`
 * placeholders, and bound for the driver by `bind`.
 */
import { SERVICES } from '@bre-batch/core/types';
import type { DbResult, DbRow, DbSession } from './session.js';

/** The job's three tables, quoted (in the sink's schema when it has one). */
export interface JobTableNames {
  readonly jobs: string;
  readonly chunks: string;
  readonly workers: string;
  /** The sink's schema (PostgreSQL), for the indexes' names. */
  readonly schema: string | undefined;
}

/** One chunk as a split makes it, numbered from 0 in this order. */
export interface ChunkInsert {
  readonly firstRow: number;
  readonly rows: number;
  /** A database input: read after this key (null: from the start, NULL keys first). */
  readonly afterKey: string | null;
  /** A file input: the bytes of its records (src/input/ranges.ts); null for a database input and for Parquet. */
  readonly byteStart: number | null;
  readonly byteEnd: number | null;
  /** A file input: the line its first row starts on, so that its rows keep the file's line numbers. */
  readonly firstLine?: number | null;
}

/** A chunk's counts, the same on every database: its position and what its rows came to. */
export const CHUNK_COUNT_COLUMNS = [
  'position',
  'rows_results',
  'rows_errors',
  'sent_to',
  'prev_sent',
  'resent',
  'takeovers',
]
  .map((c) => `${c} integer NOT NULL DEFAULT 0`)
  .join(',\n      ');

/** The columns a claim returns: the chunk's row after the claim, and `was` (`held`: taken over; `waiting`). */
export const CLAIMED_COLUMNS = [
  'chunk',
  'token',
  'first_row',
  'rows',
  'after_key',
  'byte_start',
  'byte_end',
  'first_line',
  'committed',
  'prev_sent',
] as const;

export interface JobSql {
  /** The database's clock, now: leases and liveness are the database's times, so the hosts' clocks need not agree. */
  readonly now: string;
  /** `ms` milliseconds (an SQL expression) after `instant` (an SQL expression). */
  later(instant: string, ms: string): string;
  /** A statement written with `$1`, `$2`... (each may appear more than once) as the driver takes it. */
  bind(sql: string, params: readonly unknown[]): { readonly sql: string; readonly params: readonly unknown[] };
  /**
   * Makes the tables and the claim's indexes where they are missing, without waiting on the workers already
   * committing (DDL apart from any claim: MySQL commits DDL on its own).
   */
  prepare(session: DbSession, t: JobTableNames): Promise<void>;
  /** The job's row, `splitting` (`$1` the job, `$2` its definition as JSON text); nothing when it is there. */
  insertJob(t: JobTableNames): string;
  /** A split's chunks, numbered from 0, inside the join's transaction. */
  insertChunks(session: DbSession, t: JobTableNames, job: string, plans: readonly ChunkInsert[]): Promise<void>;
  /**
   * Claims one chunk for `worker`: the lowest held one whose lease lapsed, else the lowest waiting one, skipping
   * those another transaction holds locked; its token one up, its lease `leaseMs` from now. Its row
   * (CLAIMED_COLUMNS and `was`), or undefined when there is none to claim. Costs the same whatever the job's size.
   */
  claim(session: DbSession, t: JobTableNames, job: string, worker: string, leaseMs: number): Promise<DbRow | undefined>;
  /**
   * The heartbeat's worker row, inserted or brought up to date: `$1` job, `$2` worker, `$3` host, `$4` address,
   * `$5` rows done, `$6` rate, `$7` chunks held, `$8` lease (ms).
   */
  upsertWorker(t: JobTableNames): string;
  /**
   * Inside a worker's sink batch (behind the job's fence, which locks its chunks and the job's row): the server
   * ends the session once it idles `ms` inside a transaction (its process stopped or starved), so those locks go
   * with it instead of holding the other workers' takeover and commits until it goes on. Nothing where the
   * server has no such setting (MySQL).
   */
  idleInTransaction(session: DbSession, ms: number): Promise<void>;
  /**
   * Before a worker's sink batch's transaction begins: its reads see what other transactions committed before
   * each read (READ COMMITTED), as the fence's "any chunk left" read after the job's row is locked needs.
   */
  beforeBatch(session: DbSession): Promise<void>;
  /** The job's spend table (src/job/spend.ts), `table` quoted: made where it is missing. */
  createSpend(table: string): string;
  /**
   * A row of the spend table inserted, or, when its (job, worker) is there, `update` of its columns set from
   * the values given and `updated_at` brought to now. `values` are `$n` expressions in `columns`' order.
   */
  upsertSpend(table: string, columns: readonly string[], values: readonly string[], update: readonly string[]): string;
}

/**
 * The spend table's columns per service (calls billed, their micro-units), after `calls` and `micros`, which
 * stay the worker's totals (a worker of an earlier release writes only those). The same definition on every
 * dialect, in its CREATE and in the ALTER that adds them to a table made before them (src/job/spend.ts).
 */
export const SPEND_SERVICE_COLUMNS: readonly string[] = SERVICES.flatMap((svc) => [`${svc}_calls`, `${svc}_micros`]);
export const spendServiceColumnDefs = (): string[] =>
  SPEND_SERVICE_COLUMNS.map((c) => `${c} BIGINT NOT NULL DEFAULT 0`);

/** `$n` placeholders as `?` in order of appearance, the parameters repeated and ordered to match. */
export function positional(sql: string, params: readonly unknown[]): { sql: string; params: unknown[] } {
  const out: unknown[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    out.push(params[Number(n) - 1]);
    return '?';
  });
  return { sql: text, params: out };
}

/** `$from, $from+1, ...`: `n` placeholders of an IN list. */
export function placeholders(from: number, n: number): string {
  return Array.from({ length: n }, (_, i) => `$${from + i}`).join(', ');
}

/** A job's statement written with `$n` placeholders, run on `session` as its dialect binds it. */
export function runBound<R>(
  job: JobSql,
  session: DbSession,
  sql: string,
  params: readonly unknown[] = [],
): Promise<DbResult<R>> {
  const b = job.bind(sql, params);
  return session.query<R>(b.sql, b.params);
}
