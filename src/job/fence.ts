/**
 * The fence, inside each sink batch's transaction (src/output/sink/writer.ts calls it before the batch's rows
 * are written): the chunks the batch's rows belong to are locked (FOR UPDATE) and their tokens compared with
 * the ones this worker claimed them under. Rows of a chunk whose token moved on (its lease lapsed and another
 * worker took it over) are refused: not written, and the chunk is reported lost. For the chunks still held,
 * the rows' bits and the committed position are written in the same transaction, so a kill at any moment
 * leaves the sink and the chunk's progress agreeing; the chunk whose last row commits is done, and the batch
 * that finishes the last chunk marks the job done.
 *
 * Runs on the sink's thread; the run's thread tells it which chunks it holds (hold/drop) and hears what it found.
 */
import type { DbResult, DbSession, Dialect, JobSql } from '../db/index.js';
import { placeholders, runBound } from '../db/job-sql.js';
import { bitsOf, countBits, prefixOf, setBit } from './bits.js';
import { jobTables, type JobTables } from './schema.js';

export interface HeldChunk {
  readonly chunk: number;
  readonly token: string;
  readonly firstRow: number;
  readonly rows: number;
}

/** A chunk as a claim holds it: its number and the token it was claimed under. */
interface ChunkClaim {
  readonly chunk: number;
  readonly token: string;
}

/** What one batch did to the chunks, once its transaction committed. */
export interface FenceOutcome {
  /**
   * Chunks whose token moved on: their rows were refused. With the token they were held under: this worker may
   * have claimed the chunk again since (its own lease lapsed), and that claim is not the one lost.
   */
  readonly lost: ChunkClaim[];
  /** Chunks whose last row committed. */
  readonly done: number[];
  /** Rows refused (their chunk is not this worker's any more). */
  readonly refused: number;
  readonly jobDone: boolean;
}

export class JobFence {
  readonly #held = new Map<number, HeldChunk>();
  #pending: FenceOutcome | undefined;
  /** Rows refused since the start. */
  refused = 0;

  readonly tables: JobTables;
  readonly #sql: JobSql;

  /**
   * `idleMs`: how long the batch's transaction may idle before the server ends the session (its lease: a worker
   * stopped that long inside it is taken for dead, and its locks must not hold the others' takeover).
   */
  constructor(
    readonly job: string,
    readonly worker: string,
    dialect: Dialect,
    schema: string | undefined,
    readonly idleMs?: number,
  ) {
    this.tables = jobTables(dialect, schema);
    this.#sql = dialect.job;
  }

  #run<R>(session: DbSession, sql: string, params: readonly unknown[]): Promise<DbResult<R>> {
    return runBound<R>(this.#sql, session, sql, params);
  }

  /** Before the batch's transaction (src/output/sink/batch.ts): the isolation its reads need (src/db/job-sql.ts). */
  before(session: DbSession): Promise<void> {
    return this.#sql.beforeBatch(session);
  }

  hold(c: HeldChunk): void {
    this.#held.set(c.chunk, c);
  }

  drop(chunk: number): void {
    this.#held.delete(chunk);
  }

  /**
   * In the batch's transaction: which rows may be written. Called again when the transaction is tried again
   * (a connection lost): only the last call's outcome counts, taken by `committed()` once it committed.
   */
  async admit(
    session: DbSession,
    rows: { readonly results: readonly number[]; readonly errors: readonly number[] },
  ): Promise<(row: number) => boolean> {
    if (this.idleMs !== undefined) await this.#sql.idleInTransaction(session, this.idleMs);
    const byChunk = new Map<number, { held: HeldChunk; results: number[]; errors: number[] }>();
    let refused = 0;
    const place = (row: number, kind: 'results' | 'errors') => {
      const h = this.#chunkOf(row);
      if (!h) {
        refused += 1;
        return;
      }
      let e = byChunk.get(h.chunk);
      if (!e) byChunk.set(h.chunk, (e = { held: h, results: [], errors: [] }));
      e[kind].push(row);
    };
    // A chunk claimed a moment ago may have its first rows here before its hold message reached this thread:
    // the chunks the database says this worker holds are the truth.
    if ([...rows.results, ...rows.errors].some((r) => !this.#chunkOf(r))) await this.#adopt(session);
    for (const r of rows.results) place(r, 'results');
    for (const r of rows.errors) place(r, 'errors');
    const lost: ChunkClaim[] = [];
    const done: number[] = [];
    const admitted = new Set<number>();
    let jobDone = false;
    if (byChunk.size > 0) {
      const ids = [...byChunk.keys()].sort((a, b) => a - b);
      const current = (
        await this.#run<Record<string, unknown>>(
          session,
          `SELECT chunk, token, state, committed FROM ${this.tables.chunks} WHERE job = $1 AND chunk IN (${placeholders(2, ids.length)}) ORDER BY chunk FOR UPDATE`,
          [this.job, ...ids],
        )
      ).rows;
      for (const c of current) {
        const e = byChunk.get(Number(c.chunk))!;
        if (String(c.token) !== e.held.token || c.state !== 'held') {
          lost.push({ chunk: e.held.chunk, token: e.held.token });
          refused += e.results.length + e.errors.length;
          continue;
        }
        const bits = bitsOf(c.committed, e.held.rows);
        let results = 0;
        let errors = 0;
        for (const r of e.results) {
          admitted.add(r);
          if (setBit(bits, r - e.held.firstRow)) results += 1;
        }
        for (const r of e.errors) {
          admitted.add(r);
          if (setBit(bits, r - e.held.firstRow)) errors += 1;
        }
        const position = prefixOf(bits, e.held.rows);
        const finished = position === e.held.rows || countBits(bits, e.held.rows) === e.held.rows;
        if (finished) done.push(e.held.chunk);
        await this.#run(
          session,
          `UPDATE ${this.tables.chunks} SET committed = $3, position = $4, rows_results = rows_results + $5, rows_errors = rows_errors + $6,
             state = CASE WHEN $7 THEN 'done' ELSE state END, holder = CASE WHEN $7 THEN NULL ELSE holder END,
             lease_until = CASE WHEN $7 THEN NULL ELSE lease_until END, done_at = CASE WHEN $7 THEN ${this.#sql.now} ELSE done_at END,
             done_by = CASE WHEN $7 THEN $8 ELSE done_by END
           WHERE job = $1 AND chunk = $2`,
          [this.job, e.held.chunk, bits, position, results, errors, finished, this.worker],
        );
      }
      if (done.length > 0) {
        // The job's row locked first: two workers finishing the last two chunks at one moment would each see the
        // other's chunk still held (not committed yet) and neither mark the job done. Locked, the second to
        // come looks once the first committed, and sees both chunks done.
        await this.#run(session, `SELECT 1 FROM ${this.tables.jobs} WHERE job = $1 FOR UPDATE`, [this.job]);
        // Any chunk not done, from the claim's indexes (src/db/job-sql.ts): not a count of the job's chunks. A
        // plain read in READ COMMITTED (`before`, on MySQL too): it sees the other's commit, whatever this
        // transaction read before (#adopt's read is a plain one).
        const left = await this.#run(
          session,
          `(SELECT 1 FROM ${this.tables.chunks} WHERE job = $1 AND state = 'waiting' LIMIT 1)
           UNION ALL (SELECT 1 FROM ${this.tables.chunks} WHERE job = $1 AND state = 'held' LIMIT 1)`,
          [this.job],
        );
        if (left.rows.length === 0) {
          const marked = await this.#run(
            session,
            `UPDATE ${this.tables.jobs} SET state = 'done', done_at = ${this.#sql.now} WHERE job = $1 AND state <> 'done'`,
            [this.job],
          );
          jobDone = marked.count > 0;
        }
      }
    }
    this.#pending = { lost, done, refused, jobDone };
    return (row) => admitted.has(row);
  }

  /** The batch's transaction committed: what it did. */
  committed(): FenceOutcome | undefined {
    const o = this.#pending;
    this.#pending = undefined;
    if (!o) return undefined;
    for (const c of o.lost) if (this.#held.get(c.chunk)?.token === c.token) this.#held.delete(c.chunk);
    for (const c of o.done) this.#held.delete(c);
    this.refused += o.refused;
    return o;
  }

  async #adopt(session: DbSession): Promise<void> {
    const mine = await this.#run<Record<string, unknown>>(
      session,
      `SELECT chunk, token, first_row, ${this.tables.rows} AS n FROM ${this.tables.chunks} WHERE job = $1 AND holder = $2 AND state = 'held'`,
      [this.job, this.worker],
    );
    for (const c of mine.rows) {
      const chunk = Number(c.chunk);
      if (!this.#held.has(chunk))
        this.#held.set(chunk, { chunk, token: String(c.token), firstRow: Number(c.first_row), rows: Number(c.n) });
    }
  }

  #chunkOf(row: number): HeldChunk | undefined {
    for (const h of this.#held.values()) if (row >= h.firstRow && row < h.firstRow + h.rows) return h;
    return undefined;
  }
}
