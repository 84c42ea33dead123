/**
 * Input rows from a database table or query (`--input postgres://... --table NAME | --query SQL`), in key order,
 * in short keyset pages (src/db/keyset.ts): one connection, no cursor and no transaction held between pages,
 * so a run of hours holds no snapshot back. The rows come in the same batches as the file readers'
 * (packages/formats/src/input/read.ts), numbered from 1 in read order: first the rows whose key is NULL (each an
 * error), then the rest in key order. Every row of a key held by several rows is an error too (which of them is meant
 * cannot be known, and which would come "first" is not stable from one read to the next).
 *
 * Memory: the page handed over and the next one, fetched while the run works on the first.
 *
 * A connection that breaks mid-run (the server restarted, the backend killed) is opened again on the retry
 * policy's schedule (src/retry/policy.ts) and the page asked again from the last key; one that stays away for
 * `retryForMs` is SOURCE_UNAVAILABLE (exit 3, resumable). node-postgres#2187 (a stream over a killed backend ends without an error) cannot bite: there is
 * no stream, each page is a plain query, and the session's `lost` is checked before each one.
 */
import { BreError, isBreError } from '@bre-batch/core/errors';
import {
  ConnectionLost,
  COUNT_COLUMN,
  dialectOf,
  isOrderableKeyType,
  openSession,
  queryReason,
  RANK_COLUMN,
  type DbColumn,
  type DbResult,
  type DbRow,
  type DbSession,
  type DbUrl,
  type Dialect,
  type SourceRelation,
} from '../../db/index.js';
import type { InputRow } from '@bre-batch/core/types';
import type { HeaderAsRead } from '@bre-batch/formats/input/header';
import { keyError } from '../shard.js';
import { endsGroup, splitPage } from './page.js';
import { describeRelation } from './relation.js';
import { retrying } from '../../retry/policy.js';

/** Rows a page keeps (bench: `npm run bench -- --only source`). */
export const DEFAULT_PAGE_ROWS = 2000;
/** How long a source that went away is tried again before the run stops. */
const DEFAULT_RETRY_FOR_MS = 60_000;
/**
 * How long one statement may go unanswered before its connection is taken for lost: a network that drops
 * packets instead of refusing them (a failover, a partition) is otherwise noticed only by TCP keepalive,
 * after hours.
 */
const DEFAULT_STATEMENT_TIMEOUT_MS = 300_000;

export interface DbSourceOptions {
  readonly url: DbUrl;
  readonly relation: SourceRelation;
  /** The pipeline's key column, as the pipeline names it. */
  readonly key: string;
  /**
   * The header check: the result's columns (names in order, and their types) -> the names rows are keyed by
   * (packages/formats/src/input/header.ts). Default: the names as they are.
   */
  readonly header?: (header: HeaderAsRead, columns: readonly DbColumn[]) => readonly string[];
  readonly pageRows?: number;
  readonly retryForMs?: number;
  readonly statementTimeoutMs?: number;
  /** Hears a line for the person running when the source goes away and when it is back. */
  readonly notice?: (line: string) => void;
  /** Test hook. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Where a resumed read starts: after row `row`, whose key (as read, text) was `key`; null: after the NULL keys. */
export interface SourceStart {
  readonly row: number;
  readonly key: string | null;
}

/** What the source did this session (summary.json's `source`). */
export interface SourceStats {
  /** Rows before the first read this session (a resume's start); 0 from the beginning. */
  startedAfterRow: number;
  /** Rows handed to the run. */
  rowsRead: number;
  /** Rows the database sent (a page's look-ahead row and a group fetched again count too). */
  rowsFetched: number;
  /** Statements run for rows (pages, groups, the NULL keys; not the count). */
  queries: number;
  /** Connections opened again after a loss. */
  reconnects: number;
}

/** The key as text, as it goes back to the database as a parameter. */
function keyText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

interface Fetched {
  readonly rows: DbRow[];
  /** Rows sharing each row's key (1: the key is unique). */
  readonly counts: number[];
  /** Whether each row is the last of its key. */
  readonly ends: boolean[];
  /** The key the next page starts after; undefined: no more rows. */
  readonly next: string | undefined;
}

const noop = () => undefined;

export class DbSource {
  readonly stats: SourceStats = { startedAfterRow: 0, rowsRead: 0, rowsFetched: 0, queries: 0, reconnects: 0 };
  readonly #dialect: Dialect;
  readonly #opts: DbSourceOptions;
  readonly #pageRows: number;
  #session: DbSession | undefined;
  /** Why the connection broke while no statement ran (the session's `lost`); undefined while it is fine. */
  #lost: Error | undefined;
  #closed = false;
  #connecting: Promise<DbSession> | undefined;
  /** The rows' names, where the header check renamed a column (`Reference_ID` -> `reference_id`). */
  #rename: (string | undefined)[] | undefined;

  private constructor(
    opts: DbSourceOptions,
    session: DbSession,
    /** The result's columns as the database named and typed them. */
    readonly columns: readonly DbColumn[],
    /** The key column's name in the database. */
    readonly keyColumn: string,
    readonly keyType: string,
    rename: (string | undefined)[] | undefined,
  ) {
    this.#opts = opts;
    this.#dialect = dialectOf(opts.url);
    this.#pageRows = opts.pageRows ?? DEFAULT_PAGE_ROWS;
    this.#rename = rename;
    this.#adopt(session);
  }

  /** For messages: `table loans at postgres://app@db/risk`. */
  get description(): string {
    return `${describeRelation(this.#opts.relation)} at ${this.#opts.url.display}`;
  }

  /**
   * Connects (DB_UNREACHABLE), reads the result's columns without reading rows (DB_QUERY_FAILED: no such table,
   * a query the database refuses), and checks them (the header check; the key column must be there and be
   * of a type the rows can be ordered and resumed by: INPUT_HEADER). All exit 2, before anything is called.
   */
  static async open(opts: DbSourceOptions): Promise<DbSource> {
    const dialect = dialectOf(opts.url);
    const session = await openSession(opts.url);
    try {
      let probe: DbResult<DbRow>;
      try {
        probe = await session.query(dialect.keyset.probe(opts.relation));
      } catch (err) {
        throw new BreError(
          'DB_QUERY_FAILED',
          `cannot read ${describeRelation(opts.relation)} from ${opts.url.display}: ${queryReason(err)}`,
          { cause: err },
        );
      }
      const columns = probe.columns;
      const header: HeaderAsRead = {
        names: columns.map((c) => c.name),
        where: `the columns of ${describeRelation(opts.relation)}`,
      };
      const names = opts.header ? opts.header(header, columns) : header.names;
      const index = names.indexOf(opts.key);
      if (index === -1) {
        throw new BreError(
          'INPUT_HEADER',
          `Expected ${describeRelation(opts.relation)} to have the key column '${opts.key}': a database input is read in key order and resumed after the last key done\n  columns as read: ${columns.map((c) => JSON.stringify(c.name)).join(', ')}`,
          { field: opts.key, expected: `a column '${opts.key}'` },
        );
      }
      const keyType = columns[index].type;
      if (!isOrderableKeyType(keyType)) {
        throw new BreError(
          'INPUT_HEADER',
          `Expected the key column '${columns[index].name}' of ${describeRelation(opts.relation)} to be text, a number, a date or a uuid, got ${keyType}: its values cannot be read in order and resumed by`,
          { field: opts.key, expected: 'a key column of text, a number, a date or a uuid' },
        );
      }
      const renamed = names.some((n, i) => n !== columns[i].name)
        ? names.map((n, i) => (n !== columns[i].name ? n : undefined))
        : undefined;
      return new DbSource(opts, session, columns, columns[index].name, keyType, renamed);
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  #adopt(session: DbSession): void {
    this.#session = session;
    this.#lost = undefined;
    session.lost.then((why) => {
      if (this.#session === session) this.#lost = why;
    }, noop);
  }

  /**
   * The rows in batches (a page each), numbered from `start.row + 1` (from 1 without `start`): from the
   * beginning, or after `start.key` (the NULL keys and every key up to it are not read again). With `most`
   * (a job's chunk, src/pipeline/job.ts), pages are no longer than the rows still wanted and none is asked for
   * ahead once that many are read: a chunk of 500 rows would otherwise read two pages of --input-page-rows.
   */
  async *rows(start?: SourceStart, most = Infinity): AsyncGenerator<InputRow[]> {
    let row = start?.row ?? 0;
    this.stats.startedAfterRow = row;
    const number = (f: Fetched): InputRow[] => {
      const out = this.#inputRows(f, row + 1);
      row += out.length;
      this.stats.rowsRead += out.length;
      return out;
    };
    let left = most;
    if (start === undefined) {
      const nulls = await this.#nullKeys();
      left -= nulls.rows.length;
      if (nulls.rows.length > 0) yield number(nulls);
      if (left <= 0) return;
    }
    const size = () => Math.max(1, Math.min(this.#pageRows, left));
    let pending: Promise<Fetched> | undefined = this.#page(start?.key ?? undefined, size());
    try {
      while (pending) {
        const page: Fetched = await pending;
        left -= page.rows.length;
        // The next page is asked for while the run works on this one: at most two pages are held.
        pending = page.next === undefined || left <= 0 ? undefined : this.#page(page.next, size());
        pending?.catch(noop);
        if (page.rows.length > 0) yield number(page);
      }
    } finally {
      // Returned early (--limit, a stop): the page asked for ahead is not waited for by anyone else.
      await pending?.catch(noop);
    }
  }

  /** Rows of the relation (`SELECT count(*)`), for --plan and the progress bar's total. */
  async count(): Promise<number> {
    const r = await this.#query<{ n: unknown }>(this.#dialect.keyset.count(this.#opts.relation), [], false);
    return Number(r.rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#session?.close();
  }

  async #nullKeys(): Promise<Fetched> {
    const r = await this.#query<DbRow>(this.#dialect.keyset.nullKeys(this.#opts.relation, this.keyColumn), []);
    const n = r.rows.length;
    return { rows: r.rows, counts: r.rows.map(() => n), ends: r.rows.map((_, i) => i === n - 1), next: undefined };
  }

  async #page(after: string | undefined, limit: number): Promise<Fetched> {
    const ks = this.#dialect.keyset;
    const rel = this.#opts.relation;
    const r = await this.#query<DbRow>(
      ks.page(rel, this.keyColumn, this.keyType, limit + 1, after !== undefined),
      after === undefined ? [] : [after],
    );
    const ranks = r.rows.map((x) => String(x[RANK_COLUMN]));
    const split = splitPage(ranks, limit);
    const rows: DbRow[] = [];
    const counts: number[] = [];
    const ends: boolean[] = [];
    for (let i = 0; i < split.keep; i += 1) {
      const x = r.rows[i];
      counts.push(Number(x[COUNT_COLUMN]));
      ends.push(endsGroup(ranks, split.keep, i));
      // The two columns the page added are its last: deleting the last properties keeps the row's shape fast.
      delete x[COUNT_COLUMN];
      delete x[RANK_COLUMN];
      rows.push(x);
    }
    const next = split.nextKeyIndex === null ? undefined : keyText(r.rows[split.nextKeyIndex][this.keyColumn]);
    if (split.fetchTailGroup) {
      const g = await this.#query<DbRow>(ks.group(rel, this.keyColumn, this.keyType), [next]);
      const n = g.rows.length;
      g.rows.forEach((x, i) => {
        rows.push(x);
        counts.push(n);
        ends.push(i === n - 1);
      });
    }
    return { rows, counts, ends, next };
  }

  #inputRows(f: Fetched, first: number): InputRow[] {
    const key = this.#opts.key;
    const out: InputRow[] = new Array(f.rows.length);
    for (let i = 0; i < f.rows.length; i += 1) {
      const raw = f.rows[i];
      const value = raw[this.keyColumn];
      const data = this.#rename ? this.#renamed(raw) : raw;
      const row = first + i;
      const sourceKey = value === null || value === undefined ? null : keyText(value);
      const base = { row, line: row, data, sourceKey, groupEnd: f.ends[i] };
      if (sourceKey === null) {
        const why = `the row's key ${key} is NULL in the database: every row needs a key (rows are read in key order, resumed by it, and written once per key)`;
        out[i] = { ...base, readError: keyError('MISSING_KEY', key, why) };
      } else if (f.counts[i] > 1) {
        const why = `${f.counts[i]} rows of the input have ${key} '${sourceKey}': which of them is meant cannot be known, so each is an error`;
        out[i] = { ...base, readError: keyError('DUPLICATE_KEY', key, why) };
      } else out[i] = base;
    }
    return out;
  }

  #renamed(raw: DbRow): DbRow {
    const names = this.#rename!;
    const out: DbRow = {};
    let i = 0;
    for (const k of Object.keys(raw)) {
      out[names[i] ?? k] = raw[k];
      i += 1;
    }
    return out;
  }

  /**
   * One statement, again on a new connection after a loss, on the retry policy's schedule (src/retry/) for up
   * to `retryForMs`; a statement the database refuses is DB_QUERY_FAILED at once.
   */
  async #query<R>(sql: string, params: readonly unknown[], forRows = true): Promise<DbResult<R>> {
    const retryFor = this.#opts.retryForMs ?? DEFAULT_RETRY_FOR_MS;
    const wait = this.#opts.sleep;
    return retrying(
      {
        forMs: retryFor,
        retryable: (err) => !this.#closed && this.#isLoss(err),
        refused: (err) =>
          this.#closed
            ? closedError()
            : new BreError('DB_QUERY_FAILED', `reading ${this.description} failed: ${queryReason(err)}`, {
                cause: err,
              }),
        giveUp: (err) =>
          new BreError(
            'SOURCE_UNAVAILABLE',
            `the input database went away and did not come back within ${duration(retryFor)} (${this.description}): ${reasonOf(err)}. Nothing is lost: re-run the same command to resume after the last row done`,
            { cause: err },
          ),
        onLoss: (err) =>
          this.#opts.notice?.(
            `the input database went away (${reasonOf(err)}): connecting again, for up to ${duration(retryFor)}`,
          ),
        onRecovery: () => this.#opts.notice?.(`the input database is back (${this.description}): reading on`),
        ...(wait ? { clock: { now: () => Date.now(), sleep: (ms: number) => wait(ms) } } : {}),
      },
      async () => {
        if (this.#closed) throw closedError();
        let session = this.#session;
        try {
          if (session && this.#lost) {
            // Broken while idle (between pages): seen before the next statement, not by it failing.
            this.#opts.notice?.(`the input database connection was lost (${reasonOf(this.#lost)}): connecting again`);
            this.#drop(session);
            session = undefined;
          }
          session ??= await this.#connect();
          const r = await this.#answer(session, session.query<R>(sql, params));
          if (forRows) {
            this.stats.queries += 1;
            this.stats.rowsFetched += r.rows.length;
          }
          return r;
        } catch (err) {
          // Only the connection this statement ran on: another statement may have opened a new one meanwhile.
          if (session && this.#isLoss(err)) this.#drop(session);
          throw err;
        }
      },
    );
  }

  /** The statement's answer; after the statement time-out, its connection is ended and it is a loss. */
  async #answer<T>(session: DbSession, answer: Promise<T>): Promise<T> {
    const ms = this.#opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new ConnectionLost(new Error(`no answer within ${duration(ms)}`)));
        // Ending it makes the statement itself give up too (its promise is not waited for any more).
        session.destroy();
      }, ms);
    });
    answer.catch(noop);
    try {
      return await Promise.race([answer, silent]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A broken connection, or a new one that could not be made (the server still down): worth another try. */
  #isLoss(err: unknown): boolean {
    return isBreError(err) ? err.code === 'DB_UNREACHABLE' : this.#dialect.classify(err) === 'lost';
  }

  #drop(session: DbSession): void {
    session.destroy();
    if (this.#session === session) this.#session = undefined;
  }

  /** A new connection, one at a time (the count and a page may both find the old one gone). */
  #connect(): Promise<DbSession> {
    if (this.#session) return Promise.resolve(this.#session);
    this.#connecting ??= (async () => {
      try {
        const session = await openSession(this.#opts.url);
        if (this.#closed) {
          await session.close();
          throw closedError();
        }
        this.stats.reconnects += 1;
        this.#adopt(session);
        return session;
      } finally {
        this.#connecting = undefined;
      }
    })();
    return this.#connecting;
  }
}

function closedError(): BreError {
  return new BreError('INTERRUPTED', 'the input was closed');
}

/** `300 ms`, `60 s`: --input-retry as a person gave it. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

function reasonOf(err: unknown): string {
  return isBreError(err) ? err.message : queryReason(err);
}
