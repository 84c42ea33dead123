/**
 * One connection to a database, the same shape for every dialect: what the source (src/input/db/) and the
 * sink (src/output/sink/) need and nothing more. No pool: a source holds one connection for its short
 * keyset pages, a sink one per writer, and both reconnect on their own terms after a loss.
 */
import type { EventEmitter } from 'node:events';
import type { DbUrl } from './url.js';

export interface DbColumn {
  readonly name: string;
  /** The database's own type name, lower case (`numeric`, `bigint`, `jsonb`, `varchar`...), for messages and checks. */
  readonly type: string;
}

export interface DbResult<R> {
  readonly rows: R[];
  /** The result's columns in order (empty for a statement that returns no rows). */
  readonly columns: readonly DbColumn[];
  /** Rows a statement changed (INSERT/UPDATE/DELETE), or returned. */
  readonly count: number;
}

/**
 * Values come back as the run needs them, whatever the dialect: numeric/decimal and 64-bit integers as exact
 * text (never a float), dates as `YYYY-MM-DD`, timestamps as ISO-8601 text (`2024-03-01T10:00:00`, with the
 * offset when the type has one), json/jsonb as objects; other numbers as numbers, booleans as booleans.
 */
export type DbRow = Record<string, unknown>;

export interface DbSession {
  readonly url: DbUrl;
  query<R = DbRow>(sql: string, params?: readonly unknown[]): Promise<DbResult<R>>;
  /**
   * Runs `work` inside BEGIN ... COMMIT; ROLLBACK when it throws (and the error is rethrown). Not re-entrant:
   * one transaction at a time per session.
   */
  transaction<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Settles with the error that broke the connection (the server went away, the backend was killed) when
   * that happens while no query is running; a query running at the time rejects on its own.
   * node-postgres#2187: a stream over a killed backend may end without an error, so readers check this too.
   */
  readonly lost: Promise<Error>;
  /** Ends the connection politely. */
  close(): Promise<void>;
  /** Ends it now (after an error that may have left it unusable, e.g. pg-copy-streams#115). */
  destroy(): void;
}

/** A driver's connection as the session base listens to it (pg's Client and mysql2's Connection are both emitters). */
type ConnectionEvents = Pick<EventEmitter, 'on'>;

/**
 * What every dialect's session does the same way: hear a connection lost while idle, one transaction at a time
 * (opened and committed through `query`, so a loss there is the dialect's own error), close once. A dialect
 * supplies its queries, its ROLLBACK, and how it ends a connection politely or at once.
 */
export abstract class SessionBase implements DbSession {
  readonly lost: Promise<Error>;
  #inTransaction = false;
  #closed = false;

  constructor(
    readonly url: DbUrl,
    connection: ConnectionEvents,
  ) {
    this.lost = new Promise((resolve) => {
      // An 'error' event without a listener would crash the process: a killed backend while idle lands here.
      connection.on('error', (err: Error) => resolve(err));
      connection.on('end', () => {
        if (!this.#closed) resolve(new Error('the connection was closed by the server'));
      });
    });
  }

  abstract query<R = DbRow>(sql: string, params?: readonly unknown[]): Promise<DbResult<R>>;
  /** Rolls the open transaction back; a failure here is ignored (the connection may be gone). */
  protected abstract rollback(): Promise<unknown>;
  /** Ends the connection, waiting for the server. */
  protected abstract end(): Promise<unknown>;
  /** Ends the connection without waiting for anything. */
  protected abstract kill(): void;

  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inTransaction) throw new Error('a transaction is already open on this session');
    this.#inTransaction = true;
    try {
      // Through query(): a connection lost before the transaction opens or at COMMIT is the dialect's loss too.
      await this.query('START TRANSACTION');
      try {
        const out = await work();
        await this.query('COMMIT');
        return out;
      } catch (err) {
        await this.rollback().catch(() => undefined);
        throw err;
      }
    } finally {
      this.#inTransaction = false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.end().catch(() => undefined);
  }

  destroy(): void {
    this.#closed = true;
    this.kill();
  }
}
