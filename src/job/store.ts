/**
 * The job's tables, as one worker uses them: joining (the first worker splits the input into chunks, in the
 * transaction that creates the job; a later one checks it runs the same job), claiming a chunk (FOR UPDATE
 * SKIP LOCKED: a waiting chunk, or one whose lease lapsed, with a new fencing token), renewing the leases of
 * the chunks it holds at its heartbeat, and handing them back. Times are the database's, so the hosts' clocks
 * need not agree. What a database does its own way (its tables, the claim, the split's insert, its clock) is
 * its dialect's (src/db/job-sql.ts); the rest is written here once. A connection lost (or a transaction a
 * deadlock aborted) is tried again for the sink's --sink-retry, then SINK_UNAVAILABLE (exit 3, resumable), as
 * the sink does.
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import {
  dialectOf,
  openSession,
  queryReason,
  type DbResult,
  type DbSession,
  type ChunkInsert,
  type DbUrl,
  type Dialect,
  type JobSql,
} from '../db/index.js';
import { placeholders, runBound } from '../db/job-sql.js';
import { retrying, type RetryClock } from '../retry/policy.js';
import { jobTables, type JobTables } from './schema.js';
import { definitionDifferences, definitionOf, mismatchError, type JobDefinition } from './definition.js';
import { bitsOf, clearBit, prefixOf } from './bits.js';

/** Tries of a transaction a deadlock aborted (MySQL picks a victim among transactions locking rows in another order). */
const CONFLICT_ATTEMPTS = 5;

/** One chunk as the split makes it (src/db/job-sql.ts). */
export type ChunkPlan = ChunkInsert;

/** A chunk claimed: its rows, the token its writes carry, and what of it is committed already. */
export interface ClaimedChunk extends ChunkPlan {
  readonly chunk: number;
  readonly token: string;
  /** Bits of the rows committed (./bits.ts), null when none is. */
  readonly committed: Buffer | null;
  /** Rows from the chunk's start its earlier holder had handed to its run (last reported); 0 when it had none. */
  readonly prevSent: number;
  /** Taken from a holder whose lease lapsed. */
  readonly takeover: boolean;
}

/** A chunk this worker holds, as its heartbeat reports it. */
export interface HeldReport {
  readonly chunk: number;
  readonly token: string;
  readonly sentTo: number;
  /** Rows sent again since the last report (they were handed out by the chunk's earlier holder). */
  readonly resent: number;
}

export interface WorkerReport {
  readonly worker: string;
  readonly host: string;
  readonly address: string | null;
  readonly rowsDone: number;
  /** Rows done per second, lately. */
  readonly rate: number;
}

export interface JobRow {
  readonly state: 'splitting' | 'running' | 'done';
  readonly chunks: number;
  readonly rows: number;
  readonly definition: JobDefinition;
}

export interface JobStoreOptions {
  readonly url: DbUrl;
  readonly schema?: string;
  readonly retryForMs: number;
  readonly log?: (line: string) => void;
  /** Test hook: the retry policy's clock. */
  readonly clock?: RetryClock;
}

export class JobStore {
  readonly dialect: Dialect;
  readonly sql: JobSql;
  readonly tables: JobTables;
  #session: DbSession | undefined;

  private constructor(readonly opts: JobStoreOptions) {
    this.dialect = dialectOf(opts.url);
    this.sql = this.dialect.job;
    this.tables = jobTables(this.dialect, opts.schema);
  }

  /** Connects and makes the job's tables when they are not there (DB_UNREACHABLE: exit 2 before anything is called). */
  static async open(opts: JobStoreOptions): Promise<JobStore> {
    const store = new JobStore(opts);
    store.#session = await openSession(opts.url);
    try {
      await store.sql.prepare(store.#session, store.tables);
    } catch (err) {
      store.#session.destroy();
      throw isBreError(err)
        ? err
        : new BreError('DB_QUERY_FAILED', `cannot make the job's tables at ${opts.url.display}: ${queryReason(err)}`, {
            cause: err,
          });
    }
    return store;
  }

  /** A statement written with `$n` placeholders, on `session`. */
  run<R>(session: DbSession, sql: string, params: readonly unknown[] = []): Promise<DbResult<R>> {
    return runBound<R>(this.sql, session, sql, params);
  }

  /** The job as it is, or undefined when no worker has started it. */
  async job(name: string): Promise<JobRow | undefined> {
    const t = this.tables;
    const r = await this.#query<Record<string, unknown>>(
      `SELECT state, chunks, ${t.rows} AS n, definition FROM ${t.jobs} WHERE job = $1`,
      [name],
    );
    return r[0] ? jobRow(r[0]) : undefined;
  }

  /**
   * Joins the job: the first worker creates it and splits the input (`split`), all in one transaction, so the
   * others wait on its row and then find it split (a splitter that dies leaves nothing: the next one splits).
   * A worker whose definition differs is JOB_MISMATCH (exit 2).
   */
  async join(name: string, def: JobDefinition, split: () => Promise<ChunkPlan[]>): Promise<JobRow> {
    const t = this.tables;
    return this.#retry(async (session) =>
      session.transaction(async () => {
        await this.run(session, this.sql.insertJob(t), [name, JSON.stringify(def)]);
        const row = (
          await this.run<Record<string, unknown>>(
            session,
            `SELECT state, definition FROM ${t.jobs} WHERE job = $1 FOR UPDATE`,
            [name],
          )
        ).rows[0];
        const differences = definitionDifferences(definitionOf(row.definition), def);
        if (differences.length > 0) throw mismatchError(name, differences);
        if (row.state === 'splitting') {
          const plans = await split();
          await this.sql.insertChunks(session, t, name, plans);
          await this.run(
            session,
            `UPDATE ${t.jobs} SET state = $2, chunks = $3, ${t.rows} = $4, started_at = ${this.sql.now}, done_at = CASE WHEN $5 THEN ${this.sql.now} END WHERE job = $1`,
            [
              name,
              plans.length === 0 ? 'done' : 'running',
              plans.length,
              plans.reduce((n, p) => n + p.rows, 0),
              plans.length === 0,
            ],
          );
        }
        const job = (
          await this.run<Record<string, unknown>>(
            session,
            `SELECT state, chunks, ${t.rows} AS n, definition FROM ${t.jobs} WHERE job = $1`,
            [name],
          )
        ).rows[0];
        return jobRow(job);
      }),
    );
  }

  /**
   * Claims one chunk for `worker`: one whose lease lapsed (taken over), else a waiting one, lowest first;
   * chunks another worker is claiming or committing at this moment are skipped, not waited for. The token goes
   * up by one: writes under the old one are refused from now on (./fence.ts).
   */
  async claim(name: string, worker: string, leaseMs: number): Promise<ClaimedChunk | undefined> {
    const r = await this.#retry((session) => this.sql.claim(session, this.tables, name, worker, leaseMs));
    if (!r) return undefined;
    return {
      chunk: Number(r.chunk),
      token: String(r.token),
      firstRow: Number(r.first_row),
      rows: Number(r.rows),
      afterKey: (r.after_key as string | null) ?? null,
      byteStart: r.byte_start === null ? null : Number(r.byte_start),
      byteEnd: r.byte_end === null ? null : Number(r.byte_end),
      firstLine: r.first_line === null ? null : Number(r.first_line),
      committed: Buffer.isBuffer(r.committed) ? r.committed : null,
      prevSent: Number(r.prev_sent),
      takeover: r.was === 'held',
    };
  }

  /**
   * Renews the leases of the chunks this worker holds (only those whose token is still its own) and records
   * how far it has handed each to its run; returns the chunks it lost (taken over after a lapse) and those done.
   * `doneResent`: rows sent again of chunks that finished before a heartbeat reported them.
   */
  async heartbeat(
    name: string,
    worker: WorkerReport,
    held: readonly HeldReport[],
    leaseMs: number,
    doneResent: readonly { readonly chunk: number; readonly resent: number }[] = [],
  ): Promise<{ lost: number[]; done: number[] }> {
    const t = this.tables;
    const addResent = (chunk: number, resent: number) =>
      this.#count(`UPDATE ${t.chunks} SET resent = resent + $3 WHERE job = $1 AND chunk = $2`, [name, chunk, resent]);
    // One statement a chunk (a worker holds one or two): each says by its count whether the chunk is still its own.
    const still = new Set<number>();
    for (const h of held) {
      const n = await this.#count(
        `UPDATE ${t.chunks} SET lease_until = ${this.sql.later(this.sql.now, '$3')}, sent_to = GREATEST(sent_to, $6), resent = resent + $7
         WHERE job = $1 AND chunk = $4 AND token = $5 AND holder = $2 AND state = 'held'`,
        [name, worker.worker, leaseMs, h.chunk, h.token, h.sentTo, h.resent],
      );
      if (n > 0) still.add(h.chunk);
      // Not renewed (done by this worker's last batch, or lost): the rows it sent again were sent all the same.
      else if (h.resent > 0) await addResent(h.chunk, h.resent);
    }
    for (const d of doneResent) await addResent(d.chunk, d.resent);
    await this.#query(this.sql.upsertWorker(t), [
      name,
      worker.worker,
      worker.host,
      worker.address,
      worker.rowsDone,
      worker.rate,
      held.length,
      leaseMs,
    ]);
    const missing = held.filter((h) => !still.has(h.chunk));
    if (missing.length === 0) return { lost: [], done: [] };
    // Not renewed: done by this worker's own last batch (its word may not have reached the run yet), or lost.
    const doneRows = await this.#query<{ chunk: number; token: unknown }>(
      `SELECT chunk, token FROM ${t.chunks} WHERE job = $1 AND state = 'done' AND chunk IN (${placeholders(2, missing.length)})`,
      [name, ...missing.map((h) => h.chunk)],
    );
    const done = new Set(
      doneRows
        .filter((r) => missing.some((h) => h.chunk === Number(r.chunk) && h.token === String(r.token)))
        .map((r) => Number(r.chunk)),
    );
    return { lost: missing.filter((h) => !done.has(h.chunk)).map((h) => h.chunk), done: [...done] };
  }

  /**
   * Hands chunks back at their committed position (SIGTERM, a stop): waiting again at once, for any worker,
   * which skips the rows committed. Only chunks still under this worker's token.
   */
  async release(name: string, worker: string, held: readonly { chunk: number; token: string }[]): Promise<void> {
    // prev_sent before sent_to is reset (MySQL assigns from left to right).
    for (const h of held)
      await this.#query(
        `UPDATE ${this.tables.chunks} SET prev_sent = GREATEST(prev_sent, sent_to), sent_to = 0, state = 'waiting', holder = NULL, lease_until = NULL
         WHERE job = $1 AND chunk = $3 AND token = $4 AND holder = $2 AND state = 'held'`,
        [name, worker, h.chunk, h.token],
      );
  }

  /** The worker has left the job (its row stays, for the status and the report). */
  async leave(name: string, worker: string, state: 'finished' | 'stopped'): Promise<void> {
    await this.#query(
      `UPDATE ${this.tables.workers} SET state = $3, seen_at = ${this.sql.now}, rate = 0, chunks = 0 WHERE job = $1 AND worker = $2`,
      [name, worker, state],
    );
  }

  /** Chunks not done that someone else holds or that wait: while there are any, a worker without a claim waits for them. */
  async unfinished(name: string, worker: string): Promise<number> {
    const r = await this.#query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.tables.chunks} WHERE job = $1 AND (state = 'waiting' OR (state = 'held' AND holder <> $2))`,
      [name, worker],
    );
    return Number(r[0]?.n ?? 0);
  }

  /**
   * --retry-errors on a job that is done: every chunk with rows in the errors table is waiting again, those rows'
   * bits cleared, so they are sent again (the rows that succeeded are not). Once per round: a worker joining a
   * job already re-opened just works on it.
   */
  async reopenErrors(name: string, errorsTable: string): Promise<number> {
    const t = this.tables;
    const q = (id: string) => this.dialect.quote(id);
    return this.#retry(async (session) =>
      session.transaction(async () => {
        const job = (
          await this.run<{ state: string }>(session, `SELECT state FROM ${t.jobs} WHERE job = $1 FOR UPDATE`, [name])
        ).rows[0];
        if (job?.state !== 'done') return 0;
        const chunks = (
          await this.run<Record<string, unknown>>(
            session,
            `SELECT chunk, first_row, ${t.rows} AS n, committed FROM ${t.chunks} WHERE job = $1 AND rows_errors > 0 ORDER BY chunk FOR UPDATE`,
            [name],
          )
        ).rows;
        let reopened = 0;
        for (const c of chunks) {
          const first = Number(c.first_row);
          const n = Number(c.n);
          const errs = (
            await this.run<{ row: string }>(
              session,
              `SELECT ${q('row')} AS ${q('row')} FROM ${errorsTable} WHERE ${q('row')} >= $1 AND ${q('row')} < $2`,
              [first, first + n],
            )
          ).rows;
          const bits = bitsOf(c.committed, n);
          let cleared = 0;
          for (const e of errs) if (clearBit(bits, Number(e.row) - first)) cleared += 1;
          if (cleared === 0) continue;
          reopened += 1;
          await this.run(
            session,
            `UPDATE ${t.chunks} SET state = 'waiting', holder = NULL, lease_until = NULL, committed = $3, position = $4, rows_errors = rows_errors - $5, done_at = NULL WHERE job = $1 AND chunk = $2`,
            [name, c.chunk, bits, prefixOf(bits, n), cleared],
          );
        }
        if (reopened > 0)
          await this.run(
            session,
            `UPDATE ${t.jobs} SET state = 'running', done_at = NULL, retries = retries + 1 WHERE job = $1`,
            [name],
          );
        return reopened;
      }),
    );
  }

  /** Rows of one query written with `$n` placeholders, for the status and the report. */
  query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return this.#query<R>(sql, params);
  }

  /** Rows one statement written with `$n` placeholders changed (an UPDATE that matched none: 0). */
  count(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.#count(sql, params);
  }

  async close(): Promise<void> {
    await this.#session?.close().catch(() => undefined);
    this.#session = undefined;
  }

  async #query<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.#retry(async (session) => (await this.run<R>(session, sql, params)).rows);
  }

  async #count(sql: string, params: readonly unknown[]): Promise<number> {
    return this.#retry(async (session) => (await this.run(session, sql, params)).count);
  }

  /**
   * `work` on the connection, again on a new one after a loss, on the retry policy's schedule, for --sink-retry
   * (src/retry/policy.ts); again at once after a conflict (a deadlock aborted the transaction, MySQL's way).
   */
  #retry<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    const lost = (err: unknown) =>
      isBreError(err) ? err.code === 'DB_UNREACHABLE' : this.dialect.classify(err) === 'lost';
    const conflict = (err: unknown) => !isBreError(err) && this.dialect.classify(err) === 'conflict';
    const where = this.opts.url.display;
    return retrying(
      {
        forMs: this.opts.retryForMs,
        retryable: lost,
        giveUp: (err) =>
          new BreError(
            'SINK_UNAVAILABLE',
            `the job's database at ${where} went away and did not come back within --sink-retry (${Math.round(this.opts.retryForMs / 1000)} s): ${isBreError(err) ? err.message : queryReason(err)}. Nothing is lost: the chunks this worker held go back to the job when their lease lapses; re-run the same command when the database is back`,
            { cause: err },
          ),
        onLoss: (err) =>
          this.opts.log?.(
            `job: lost the connection to ${where} (${isBreError(err) ? err.message : queryReason(err)}): connecting again for up to ${Math.round(this.opts.retryForMs / 1000)} s`,
          ),
        ...(this.opts.clock ? { clock: this.opts.clock } : {}),
      },
      async () => {
        for (let attempt = 1; ; attempt += 1) {
          try {
            this.#session ??= await openSession(this.opts.url);
            return await work(this.#session);
          } catch (err) {
            // Rolled back whole: the same work again sees what the transaction that won committed.
            if (conflict(err) && attempt < CONFLICT_ATTEMPTS) continue;
            if (lost(err)) {
              this.#session?.destroy();
              this.#session = undefined;
            }
            throw err;
          }
        }
      },
    );
  }
}

function jobRow(r: Record<string, unknown>): JobRow {
  return {
    state: r.state as JobRow['state'],
    chunks: Number(r.chunks),
    rows: Number(r.n),
    definition: definitionOf(r.definition),
  };
}
