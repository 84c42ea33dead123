/**
 * The job's tables, as one worker uses them: joining (the first worker splits the input into chunks, in the
 * transaction that creates the job; a later one checks it runs the same job), claiming a chunk (FOR UPDATE
 * SKIP LOCKED: a waiting chunk, or one whose lease lapsed, with a new fencing token), renewing the leases of
 * the chunks it holds at its heartbeat, and handing them back. Times are the database's (now()), so the hosts'
 * clocks need not agree. A connection lost is opened again for the sink's --sink-retry, then SINK_UNAVAILABLE
 * (exit 3, resumable), as the sink does.
 */
import { BreError, isBreError } from '../errors.js';
import { dialectOf, openSession, queryReason, type DbSession, type DbUrl, type Dialect } from '../db/index.js';
import { retrying, type RetryClock } from '../retry/policy.js';
import { createJobTables, jobTables, jobTableUpgrades, type JobTables } from './schema.js';
import { definitionDifferences, mismatchError, type JobDefinition } from './definition.js';
import { bitsOf, clearBit, prefixOf } from './bits.js';

/** One chunk as the split makes it. */
export interface ChunkPlan {
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
  readonly tables: JobTables;
  #session: DbSession | undefined;

  private constructor(readonly opts: JobStoreOptions) {
    this.dialect = dialectOf(opts.url);
    this.tables = jobTables(this.dialect, opts.schema);
  }

  /** Connects and makes the job's tables when they are not there (DB_UNREACHABLE: exit 2 before anything is called). */
  static async open(opts: JobStoreOptions): Promise<JobStore> {
    if (opts.url.dialect !== 'postgres') {
      throw new BreError(
        'USAGE',
        `Expected a PostgreSQL --sink with --job, got ${opts.url.display}: a job's chunks are claimed with FOR UPDATE SKIP LOCKED and committed with the sink's batches, which bre-batch does on PostgreSQL only`,
        { field: 'job' },
      );
    }
    const store = new JobStore(opts);
    store.#session = await openSession(opts.url);
    try {
      await store.#createTables(store.#session);
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

  async #createTables(session: DbSession): Promise<void> {
    for (const sql of createJobTables(this.tables)) {
      try {
        await session.query(sql);
      } catch (err) {
        // Two workers making the table at one moment: PostgreSQL may say so with a unique violation on its catalog.
        if (this.dialect.classify(err) === 'lost' || (err as { code?: string }).code !== '23505') throw err;
      }
    }
    for (const u of jobTableUpgrades(this.tables)) {
      try {
        await session.query(u.probe);
      } catch (err) {
        if (this.dialect.classify(err) === 'lost') throw err;
        await session.query(u.add);
      }
    }
    // Looked for first: CREATE INDEX takes a lock on the table even when the index is there, which would make
    // every worker's start wait for the others' commits.
    for (const index of this.tables.indexes) {
      const found = await session.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [index.qualified]);
      if (found.rows[0]?.ok) continue;
      try {
        await session.query(index.create);
      } catch (err) {
        if (this.dialect.classify(err) === 'lost' || (err as { code?: string }).code !== '23505') throw err;
      }
    }
  }

  /** The job as it is, or undefined when no worker has started it. */
  async job(name: string): Promise<JobRow | undefined> {
    const r = await this.#query<Record<string, unknown>>(
      `SELECT state, chunks, rows, definition FROM ${this.tables.jobs} WHERE job = $1`,
      [name],
    );
    const x = r[0];
    return x
      ? {
          state: x.state as JobRow['state'],
          chunks: Number(x.chunks),
          rows: Number(x.rows),
          definition: x.definition as JobDefinition,
        }
      : undefined;
  }

  /**
   * Joins the job: the first worker creates it and splits the input (`split`), all in one transaction, so the
   * others wait on its row and then find it split (a splitter that dies leaves nothing: the next one splits).
   * A worker whose definition differs is JOB_MISMATCH (exit 2).
   */
  async join(name: string, def: JobDefinition, split: () => Promise<ChunkPlan[]>): Promise<JobRow> {
    return this.#retry(async (session) =>
      session.transaction(async () => {
        await session.query(
          `INSERT INTO ${this.tables.jobs} (job, definition, state) VALUES ($1, $2, 'splitting') ON CONFLICT (job) DO NOTHING`,
          [name, JSON.stringify(def)],
        );
        const row = (
          await session.query<Record<string, unknown>>(
            `SELECT state, definition FROM ${this.tables.jobs} WHERE job = $1 FOR UPDATE`,
            [name],
          )
        ).rows[0];
        const differences = definitionDifferences(row.definition as JobDefinition, def);
        if (differences.length > 0) throw mismatchError(name, differences);
        if (row.state === 'splitting') {
          const plans = await split();
          const cols = ['first_row', 'rows', 'after_key', 'byte_start', 'byte_end', 'first_line'] as const;
          const arrays = [
            plans.map((p) => p.firstRow),
            plans.map((p) => p.rows),
            plans.map((p) => p.afterKey),
            plans.map((p) => p.byteStart),
            plans.map((p) => p.byteEnd),
            plans.map((p) => p.firstLine ?? null),
          ];
          // Inserted in slices: one statement's parameters are bounded, but arrays are one parameter each.
          for (let i = 0; i < plans.length; i += 10_000) {
            await session.query(
              `INSERT INTO ${this.tables.chunks} (job, chunk, ${cols.join(', ')})
             SELECT $1, $2::int + ord::int - 1, f, r, a, bs, be, fl FROM unnest($3::bigint[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) WITH ORDINALITY AS u(f, r, a, bs, be, fl, ord)`,
              [name, i, ...arrays.map((a) => a.slice(i, i + 10_000))],
            );
          }
          await session.query(
            `UPDATE ${this.tables.jobs} SET state = $2, chunks = $3, rows = $4, started_at = now(), done_at = CASE WHEN $3::int = 0 THEN now() END WHERE job = $1`,
            [name, plans.length === 0 ? 'done' : 'running', plans.length, plans.reduce((n, p) => n + p.rows, 0)],
          );
        }
        const job = (
          await session.query<Record<string, unknown>>(
            `SELECT state, chunks, rows, definition FROM ${this.tables.jobs} WHERE job = $1`,
            [name],
          )
        ).rows[0];
        return {
          state: job.state as JobRow['state'],
          chunks: Number(job.chunks),
          rows: Number(job.rows),
          definition: job.definition as JobDefinition,
        };
      }),
    );
  }

  /**
   * Claims one chunk for `worker`: one whose lease lapsed (taken over), else a waiting one, lowest first;
   * chunks another worker is claiming or committing at this moment are skipped, not waited for. The token goes
   * up by one: writes under the old one are refused from now on (./fence.ts).
   */
  async claim(name: string, worker: string, leaseMs: number): Promise<ClaimedChunk | undefined> {
    const t = this.tables.chunks;
    // A chunk whose lease lapsed first (its holder died or stalled: left for the end, it would be the job's last
    // chunk, with the other workers idle while one finishes it), else the lowest waiting one: each read from its
    // partial index in chunk order (./schema.ts), so a claim costs the same in a job of 500 chunks or 500,000.
    const rows = await this.#query<Record<string, unknown>>(
      `WITH l AS (SELECT chunk, 'held' AS was FROM ${t} WHERE job = $1 AND state = 'held' AND lease_until < now() ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
         w AS (SELECT chunk, 'waiting' AS was FROM ${t} WHERE job = $1 AND state = 'waiting' AND NOT EXISTS (SELECT 1 FROM l)
               ORDER BY chunk LIMIT 1 FOR UPDATE SKIP LOCKED),
         s AS (SELECT chunk, was FROM l UNION ALL SELECT chunk, was FROM w)
       UPDATE ${t} c SET state = 'held', holder = $2, token = c.token + 1, lease_until = now() + $3 * interval '1 millisecond', claimed_at = now(),
         takeovers = c.takeovers + (CASE WHEN c.state = 'held' THEN 1 ELSE 0 END),
         prev_sent = CASE WHEN c.state = 'held' THEN GREATEST(c.sent_to, c.prev_sent) ELSE c.prev_sent END,
         sent_to = 0
       FROM s
       WHERE c.job = $1 AND c.chunk = s.chunk
       RETURNING c.chunk, c.token, c.first_row, c.rows, c.after_key, c.byte_start, c.byte_end, c.first_line, c.committed, c.prev_sent, s.was`,
      [name, worker, leaseMs],
    );
    const r = rows[0];
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
   */
  async heartbeat(
    name: string,
    worker: WorkerReport,
    held: readonly HeldReport[],
    leaseMs: number,
  ): Promise<{ lost: number[]; done: number[] }> {
    const kept =
      held.length === 0
        ? []
        : await this.#query<{ chunk: number }>(
            `UPDATE ${this.tables.chunks} c SET lease_until = now() + $3 * interval '1 millisecond', sent_to = GREATEST(c.sent_to, u.sent), resent = c.resent + u.resent
       FROM unnest($4::int[], $5::bigint[], $6::int[], $7::int[]) AS u(chunk, token, sent, resent)
       WHERE c.job = $1 AND c.chunk = u.chunk AND c.token = u.token AND c.holder = $2 AND c.state = 'held'
       RETURNING c.chunk`,
            [
              name,
              worker.worker,
              leaseMs,
              held.map((h) => h.chunk),
              held.map((h) => h.token),
              held.map((h) => h.sentTo),
              held.map((h) => h.resent),
            ],
          );
    await this.#query(
      `INSERT INTO ${this.tables.workers} (job, worker, host, address, state, rows_done, rate, chunks, lease_ms) VALUES ($1, $2, $3, $4, 'working', $5, $6, $7, $8)
       ON CONFLICT (job, worker) DO UPDATE SET seen_at = now(), state = 'working', rows_done = EXCLUDED.rows_done, rate = EXCLUDED.rate, chunks = EXCLUDED.chunks, lease_ms = EXCLUDED.lease_ms`,
      [name, worker.worker, worker.host, worker.address, worker.rowsDone, worker.rate, held.length, leaseMs],
    );
    const still = new Set(kept.map((k) => Number(k.chunk)));
    const missing = held.filter((h) => !still.has(h.chunk));
    if (missing.length === 0) return { lost: [], done: [] };
    // Not renewed: done by this worker's own last batch (its word may not have reached the run yet), or lost.
    const done = new Set(
      (
        await this.#query<{ chunk: number }>(
          `SELECT c.chunk FROM ${this.tables.chunks} c JOIN unnest($2::int[], $3::bigint[]) AS u(chunk, token) ON c.chunk = u.chunk AND c.token = u.token WHERE c.job = $1 AND c.state = 'done'`,
          [name, missing.map((h) => h.chunk), missing.map((h) => h.token)],
        )
      ).map((r) => Number(r.chunk)),
    );
    return { lost: missing.filter((h) => !done.has(h.chunk)).map((h) => h.chunk), done: [...done] };
  }

  /**
   * Hands chunks back at their committed position (SIGTERM, a stop): waiting again at once, for any worker,
   * which skips the rows committed. Only chunks still under this worker's token.
   */
  async release(name: string, worker: string, held: readonly { chunk: number; token: string }[]): Promise<void> {
    if (held.length === 0) return;
    await this.#query(
      `UPDATE ${this.tables.chunks} c SET state = 'waiting', holder = NULL, lease_until = NULL, prev_sent = GREATEST(c.prev_sent, c.sent_to), sent_to = 0
       FROM unnest($3::int[], $4::bigint[]) AS u(chunk, token)
       WHERE c.job = $1 AND c.chunk = u.chunk AND c.token = u.token AND c.holder = $2 AND c.state = 'held'`,
      [name, worker, held.map((h) => h.chunk), held.map((h) => h.token)],
    );
  }

  /** The worker has left the job (its row stays, for the status and the report). */
  async leave(name: string, worker: string, state: 'finished' | 'stopped'): Promise<void> {
    await this.#query(
      `UPDATE ${this.tables.workers} SET state = $3, seen_at = now(), rate = 0, chunks = 0 WHERE job = $1 AND worker = $2`,
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
    return this.#retry(async (session) =>
      session.transaction(async () => {
        const job = (
          await session.query<{ state: string }>(`SELECT state FROM ${this.tables.jobs} WHERE job = $1 FOR UPDATE`, [
            name,
          ])
        ).rows[0];
        if (job?.state !== 'done') return 0;
        const chunks = (
          await session.query<Record<string, unknown>>(
            `SELECT chunk, first_row, rows, committed FROM ${this.tables.chunks} WHERE job = $1 AND rows_errors > 0 ORDER BY chunk FOR UPDATE`,
            [name],
          )
        ).rows;
        let reopened = 0;
        for (const c of chunks) {
          const first = Number(c.first_row);
          const n = Number(c.rows);
          const errs = (
            await session.query<{ row: string }>(
              `SELECT ${this.dialect.quote('row')} AS row FROM ${errorsTable} WHERE ${this.dialect.quote('row')} >= $1 AND ${this.dialect.quote('row')} < $2`,
              [first, first + n],
            )
          ).rows;
          const bits = bitsOf(c.committed, n);
          let cleared = 0;
          for (const e of errs) if (clearBit(bits, Number(e.row) - first)) cleared += 1;
          if (cleared === 0) continue;
          reopened += 1;
          await session.query(
            `UPDATE ${this.tables.chunks} SET state = 'waiting', holder = NULL, lease_until = NULL, committed = $3, position = $4, rows_errors = rows_errors - $5, done_at = NULL WHERE job = $1 AND chunk = $2`,
            [name, c.chunk, bits, prefixOf(bits, n), cleared],
          );
        }
        if (reopened > 0)
          await session.query(
            `UPDATE ${this.tables.jobs} SET state = 'running', done_at = NULL, retries = retries + 1 WHERE job = $1`,
            [name],
          );
        return reopened;
      }),
    );
  }

  /** Rows of one query, for the status and the report. */
  query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return this.#query<R>(sql, params);
  }

  async close(): Promise<void> {
    await this.#session?.close().catch(() => undefined);
    this.#session = undefined;
  }

  async #query<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.#retry(async (session) => (await session.query<R>(sql, params)).rows);
  }

  /** `work` on the connection, again on a new one after a loss, on the retry policy's schedule, for --sink-retry (src/retry/policy.ts). */
  #retry<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    const lost = (err: unknown) =>
      isBreError(err) ? err.code === 'DB_UNREACHABLE' : this.dialect.classify(err) === 'lost';
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
        try {
          this.#session ??= await openSession(this.opts.url);
          return await work(this.#session);
        } catch (err) {
          if (lost(err)) {
            this.#session?.destroy();
            this.#session = undefined;
          }
          throw err;
        }
      },
    );
  }
}
