/**
 * The sink's connection: its tables made or checked before any call (./schema.ts), then batches written each
 * in one transaction with the folder's progress (./batch.ts).
 *
 * A connection lost mid-write is connected again on the retry policy's schedule (src/retry/policy.ts) and the
 * batch written again, for as long as `retryForMs` allows; then SINK_UNAVAILABLE (exit 3, resumable). A write
 * the database refuses (a value a user's column cannot take, a constraint) is SINK_REJECTED (exit 2): trying
 * again would not mend it.
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import { dialectOf, openSession, queryReason, type DbSession, type Dialect } from '../../db/index.js';
import { retrying } from '../../retry/policy.js';
import { sleep as realSleep } from '../../retry/sleep.js';
import {
  dedupe,
  readProgress,
  writeBatch,
  type BatchFence,
  type FolderId,
  type FolderProgress,
  type SinkBatch,
  type Written,
} from './batch.js';
import { SinkSchema, type SinkShape, type SinkTarget } from './schema.js';
import { sinkNames, type SinkNames } from './tables.js';

export type { BatchFence, FolderId, FolderProgress, ResultItem, SinkBatch, Written } from './batch.js';
export type { SinkShape, SinkTarget } from './schema.js';

/** The sink went away for longer than --sink-retry: the one message, whoever gives up (a write, the thread's start). */
export function sinkUnavailable(target: SinkTarget, reason: string, cause: unknown): BreError {
  return new BreError(
    'SINK_UNAVAILABLE',
    `the sink ${dialectOf(target.url).label} at ${target.url.display} went away and did not come back within --sink-retry (${Math.round(target.retryForMs / 1000)} s): ${reason}. Nothing is lost: the rows are in the output folder; re-run the same command when the database is back (or \`bre-batch load\` the folder).`,
    { cause },
  );
}

export class SinkWriter {
  readonly dialect: Dialect;
  readonly names: SinkNames;
  #session: DbSession | undefined;
  #schema!: SinkSchema;
  /** Connections opened again after a loss. */
  reconnects = 0;

  private constructor(
    readonly target: SinkTarget,
    readonly shape: SinkShape,
    private readonly log: (line: string) => void,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    this.dialect = dialectOf(target.url);
    this.names = sinkNames(target.table, this.dialect.maxIdentifier);
  }

  /**
   * Connects and makes or checks the tables, before any call: a database that cannot be reached is
   * DB_UNREACHABLE, a user's table that cannot take the rows SINK_TABLE_MISMATCH (both exit 2).
   */
  static async open(
    target: SinkTarget,
    shape: SinkShape,
    log: (line: string) => void,
    sleep: (ms: number) => Promise<void> = realSleep,
  ): Promise<SinkWriter> {
    const w = new SinkWriter(target, shape, log, sleep);
    const session = await openSession(target.url);
    w.#session = session;
    try {
      w.#schema = await SinkSchema.prepare(session, w.dialect, target, shape, w.names, log);
    } catch (err) {
      session.destroy();
      throw isBreError(err)
        ? err
        : new BreError('DB_QUERY_FAILED', `${w.#where()}: cannot prepare the sink's tables: ${queryReason(err)}`, {
            cause: err,
          });
    }
    return w;
  }

  /** Columns added for fields none declared, or widened, since the writer opened: each said once. */
  get columnChanges(): readonly string[] {
    return this.#schema.changes;
  }

  /** The tables, schema and all. */
  tables(): string[] {
    const t = [this.names.results, this.names.errors, ...(this.shape.transactions ? [this.names.transactions] : [])];
    return t.map((n) => (this.target.schema ? `${this.target.schema}.${n}` : n));
  }

  /** The tables and the database, as messages show them. */
  describe(): string {
    return `${this.tables().join(', ')} at ${this.target.url.display}`;
  }

  /** Where the commit table says the folder has been written up to; undefined when it never was. */
  async progress(folder: FolderId): Promise<FolderProgress | undefined> {
    return this.#withRetry((session) => readProgress(session, this.#schema, folder));
  }

  /** Writes one batch in one transaction, with the folder's progress; tries again while the connection comes back. */
  async write(folder: FolderId, batch: SinkBatch, fence?: BatchFence): Promise<Written> {
    const results = dedupe(batch.results, (r) => r.key);
    const errors = dedupe(batch.errors, (e) => e.row);
    return this.#withRetry((session) =>
      writeBatch(session, this.#schema, folder, { results, errors }, batch.progress, fence),
    );
  }

  async close(): Promise<void> {
    await this.#session?.close();
    this.#session = undefined;
  }

  /** Ends the connection now (a run stopping on another failure). */
  destroy(): void {
    this.#session?.destroy();
    this.#session = undefined;
  }

  #where(): string {
    return `the sink ${this.dialect.label} at ${this.target.url.display}`;
  }

  /**
   * `work` on the connection, again on a new one after a loss or a conflict (a deadlock, a serialization
   * failure); the sink's other BreErrors (a column that cannot hold a field) are thrown as they are.
   */
  #withRetry<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    const lost = (err: unknown) =>
      isBreError(err) ? err.code === 'DB_UNREACHABLE' : this.dialect.classify(err) === 'lost';
    const retryable = (err: unknown) => lost(err) || (!isBreError(err) && this.dialect.classify(err) === 'conflict');
    const where = `${this.dialect.label} at ${this.target.url.display}`;
    return retrying(
      {
        forMs: this.target.retryForMs,
        retryable,
        refused: (err) =>
          isBreError(err)
            ? err
            : new BreError(
                'SINK_REJECTED',
                `${this.#where()} refused a write to ${this.describe()}: ${queryReason(err)}. Fix the table (or name another with --sink-table), then re-run the same command: the rows are in the output folder and the sink catches up.`,
                { cause: err },
              ),
        giveUp: (err) =>
          sinkUnavailable(this.target, lost(err) ? queryReason(err) : 'conflicts kept aborting the write', err),
        onLoss: (err) => {
          if (lost(err))
            this.log(
              `sink: lost the connection to ${where} (${queryReason(err)}); connecting again for up to ${Math.round(this.target.retryForMs / 1000)} s`,
            );
        },
        onRecovery: () => this.log(`sink: ${where} is back; writing goes on`),
        clock: { now: () => Date.now(), sleep: (ms) => this.sleep(ms) },
      },
      async (failures) => {
        try {
          if (!this.#session) {
            this.#session = await openSession(this.target.url);
            if (failures > 0) this.reconnects += 1;
          }
          return await work(this.#session);
        } catch (err) {
          if (retryable(err)) {
            // A new connection for the next attempt, a conflict's too: a COPY that failed can leave node-postgres'
            // connection unusable (pg-copy-streams#115).
            this.#session?.destroy();
            this.#session = undefined;
          }
          throw err;
        }
      },
    );
  }
}
