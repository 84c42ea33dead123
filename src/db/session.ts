/**
 * One connection to a database, the same shape for every dialect: what the source (src/input/db/) and the
 * sink (src/output/sink/) need and nothing more. No pool: a source holds one connection for its short
 * keyset pages, a sink one per writer, and both reconnect on their own terms after a loss.
 */
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
