/**
 * The sink's side of the database: its tables made or checked before any call, then batches written each in
 * one transaction with the folder's progress in the commit table (exactly once: a batch and the record that it
 * was written commit together or not at all). Upserts by the key make a batch written twice (a retry, a
 * resume, a `load` of the same folder) change nothing.
 *
 * A connection lost mid-write is connected again with backoff and the batch written again, for as long as
 * `retryForMs` allows; then SINK_UNAVAILABLE (exit 3, resumable). A write the database refuses (a value a
 * user's column cannot take, a constraint) is SINK_REJECTED (exit 2): trying again would not mend it.
 */
import { BreError, isBreError } from '../../errors.js';
import {
  dialectOf, isConnectionLoss, isRetryableConflict, openSession, queryReason,
  type DbSession, type DbUrl, type Dialect, type TableColumn,
} from '../../db/index.js';
import type { ColumnKind, NormalisedTransaction } from '../../types.js';
import type { ErrorLine } from '../format/index.js';
import { isoOffset, kindOfTypes } from '../parquet/schema.js';
import { typeBit } from '../columns.js';
import {
  columnName, errorColumns, LOADS_TABLE, OWNED_COMMENT, resultFixedColumns, sinkNames, transactionColumns, widerKind,
  type SinkColumn, type SinkNames,
} from './tables.js';
import { sinkValue, sqlTimestamp } from './values.js';

export interface SinkTarget {
  readonly url: DbUrl;
  /** NAME (--sink-table; default the pipeline's name). */
  readonly table: string;
  /** PostgreSQL's schema (--sink-schema); undefined: the connection's current schema (MySQL: the URL's database). */
  readonly schema?: string;
  /** How long a sink that went away is tried again before SINK_UNAVAILABLE (--sink-retry). */
  readonly retryForMs: number;
}

export interface SinkShape {
  /** The key column's name, as in the input (the pipeline's key). */
  readonly key: string;
  readonly sampled: boolean;
  /** An account pipeline: NAME_transactions too. */
  readonly transactions: boolean;
}

export interface ResultItem {
  readonly row: number;
  readonly key: string;
  readonly stratum?: string;
  readonly weight?: number;
  readonly stages: Record<string, Record<string, unknown>>;
  /** `stages` as the journal line has it, when it could be cut from the line (the `result` column's text). */
  readonly stagesText?: string;
  /** The row's transactions (an account pipeline), replacing those its key had. */
  readonly transactions?: readonly NormalisedTransaction[];
}

/** Where one journal has been written up to: its file (./tail.ts fileIdentity) and byte. */
export interface JournalMark {
  readonly file: string | null;
  readonly bytes: number;
}

export interface FolderProgress {
  readonly results: JournalMark;
  readonly errors: JournalMark;
  readonly batches: number;
}

/**
 * A job's fence (src/job/fence.ts): inside a batch's transaction, which of its rows may be written (those of
 * chunks the worker still holds), their chunks' positions written in the same transaction.
 */
export interface BatchFence {
  admit(session: DbSession, rows: { readonly results: readonly number[]; readonly errors: readonly number[] }): Promise<(row: number) => boolean>;
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
}

interface Table {
  /** Quoted, schema and all. */
  readonly sql: string;
  readonly name: string;
  readonly owned: boolean;
  /** Its columns by name: their SQL type and the kind values are written with. */
  readonly columns: Map<string, { type: string; kind: ColumnKind | undefined }>;
}

const LOAD_COLUMNS: readonly SinkColumn[] = [
  { name: 'sink_table', kind: 'string' }, { name: 'folder', kind: 'string' }, { name: 'host', kind: 'string' }, { name: 'path', kind: 'string' },
  { name: 'results_file', kind: 'string' }, { name: 'results_bytes', kind: 'int64' }, { name: 'errors_file', kind: 'string' },
  { name: 'errors_bytes', kind: 'int64' }, { name: 'batches', kind: 'int64' }, { name: 'updated_at', kind: 'timestamp_local_ms' },
];

/** Most rows in one INSERT: fewer when the rows are wide (the bind parameters of one statement are bounded). */
const MAX_STATEMENT_ROWS = 1000;
/** Rows from which the database's bulk way (PostgreSQL's COPY) is worth its extra statements. */
const BULK_MIN_ROWS = 100;
const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000, 15000] as const;

export class SinkWriter {
  readonly dialect: Dialect;
  readonly names: SinkNames;
  #session: DbSession | undefined;
  #results!: Table;
  #errors!: Table;
  #transactions: Table | undefined;
  #loads!: Table;
  /** Result fields by their `stage.field` header: the column they go in. */
  readonly #fields = new Map<string, string>();
  #warnedLoss = false;
  /** Connections opened again after a loss. */
  reconnects = 0;

  private constructor(readonly target: SinkTarget, readonly shape: SinkShape, private readonly log: (line: string) => void, private readonly sleep: (ms: number) => Promise<void>) {
    this.dialect = dialectOf(target.url);
    this.names = sinkNames(target.table, this.dialect.maxIdentifier);
  }

  /**
   * Connects and makes or checks the tables, before any call: a database that cannot be reached is
   * DB_UNREACHABLE, a user's table that cannot take the rows SINK_TABLE_MISMATCH (both exit 2).
   */
  static async open(target: SinkTarget, shape: SinkShape, log: (line: string) => void, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))): Promise<SinkWriter> {
    const w = new SinkWriter(target, shape, log, sleep);
    w.#session = await openSession(target.url);
    try {
      await w.#prepare(w.#session);
    } catch (err) {
      w.#session.destroy();
      throw isBreError(err) ? err : new BreError('DB_QUERY_FAILED', `${w.#where()}: cannot prepare the sink's tables: ${queryReason(err)}`, { cause: err });
    }
    return w;
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
    return this.#withRetry(async (session) => {
      const q = (c: string) => this.dialect.quote(c);
      const res = await session.query<Record<string, unknown>>(
        `SELECT ${q('results_file')}, ${q('results_bytes')}, ${q('errors_file')}, ${q('errors_bytes')}, ${q('batches')} FROM ${this.#loads.sql} WHERE ${q('sink_table')} = ${this.dialect.param(1)} AND ${q('folder')} = ${this.dialect.param(2)}`,
        [this.#sinkName(), folder.id],
      );
      const r = res.rows[0];
      if (!r) return undefined;
      return {
        results: { file: (r.results_file as string | null) ?? null, bytes: Number(r.results_bytes) },
        errors: { file: (r.errors_file as string | null) ?? null, bytes: Number(r.errors_bytes) },
        batches: Number(r.batches),
      };
    });
  }

  /** Writes one batch in one transaction, with the folder's progress; tries again while the connection comes back. */
  async write(folder: FolderId, batch: SinkBatch, fence?: BatchFence): Promise<{ results: number; errors: number }> {
    const allResults = dedupe(batch.results, (r) => r.key);
    const allErrors = dedupe(batch.errors, (e) => e.row);
    let written = { results: allResults.length, errors: allErrors.length };
    await this.#withRetry(async (session) => {
      await this.#fitColumns(session, allResults);
      await session.transaction(async () => {
        // A job's worker writes only the rows of chunks it still holds, checked in this transaction (src/job/fence.ts).
        const may = fence ? await fence.admit(session, { results: allResults.map((r) => r.row), errors: allErrors.map((e) => e.row) }) : undefined;
        const results = may ? allResults.filter((r) => may(r.row)) : allResults;
        const errors = may ? allErrors.filter((e) => may(e.row)) : allErrors;
        written = { results: results.length, errors: errors.length };
        await this.#writeResults(session, results);
        await this.#writeErrors(session, errors);
        await this.#upsert(session, this.#loads, LOAD_COLUMNS.map((c) => c.name), ['sink_table', 'folder'], [[
          this.#sinkName(), folder.id, folder.host, folder.path, batch.progress.results.file, batch.progress.results.bytes,
          batch.progress.errors.file, batch.progress.errors.bytes, batch.progress.batches, sqlTimestamp(Date.now()),
        ]]);
      });
    });
    return written;
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

  #sinkName(): string {
    return this.target.schema ? `${this.target.schema}.${this.names.results}` : this.names.results;
  }

  #quoted(name: string): string {
    return this.dialect.table(name, this.target.schema);
  }

  // -- the tables ------------------------------------------------------------------------------------------

  async #prepare(session: DbSession): Promise<void> {
    const key = this.shape.key;
    const col = (c: SinkColumn, notNull = false) => ({ name: c.name, type: this.dialect.sink.typeOf(c.kind), notNull });
    const keyCol = { name: key, type: this.dialect.sink.keyType, notNull: true };
    // Each table is checked before the next is made: a user's table refused leaves nothing new behind.
    this.#results = await this.#table(session, this.names.results, [keyCol, ...resultFixedColumns(this.shape.sampled).map((c) => col(c))], [key]);
    this.#check(this.#results, [key], true);
    this.#errors = await this.#table(session, this.names.errors, errorColumns(key, this.shape.sampled).map((c) => col(c, c.name === 'row')), ['row']);
    this.#check(this.#errors, ['row'], true);
    if (this.shape.transactions) {
      this.#transactions = await this.#table(session, this.names.transactions, transactionColumns(key).map((c) => (c.name === key ? keyCol : col(c, c.name === 'seq'))), [key, 'seq']);
      this.#check(this.#transactions, [key], false);
    }
    this.#loads = await this.#table(session, LOADS_TABLE, LOAD_COLUMNS.map((c) => (c.name === 'sink_table' || c.name === 'folder' ? { name: c.name, type: this.dialect.sink.keyType, notNull: true } : col(c))), ['sink_table', 'folder']);
    if (!this.#loads.owned) this.#mismatch(this.#loads, `${LOADS_TABLE} is the commit table bre-batch keeps; a table of that name that bre-batch did not create is in the way`, `rename or drop it`);
    for (const c of this.#results.columns.keys()) if (c.includes('.')) this.#fields.set(c, c);
  }

  /** The table as it is, made first (with its comment) when it is not there. */
  async #table(session: DbSession, name: string, columns: readonly { name: string; type: string; notNull: boolean }[], primaryKey: readonly string[]): Promise<Table> {
    let table = await this.#describe(session, name);
    if (table.columns.size === 0) {
      try {
        const statements = this.dialect.sink.createTable(this.#quoted(name), columns, primaryKey, OWNED_COMMENT);
        // The table and its comment at once (PostgreSQL's DDL is transactional): another worker starting at the
        // same moment never sees the table without the comment that says it is bre-batch's own.
        if (statements.length > 1 && this.dialect.name === 'postgres') await session.transaction(async () => { for (const sql of statements) await session.query(sql); });
        else for (const sql of statements) await session.query(sql);
      } catch (err) {
        // Another worker made it at the same moment (PostgreSQL may say so with a unique violation).
        if (isConnectionLoss(err)) throw err;
      }
      table = await this.#describe(session, name);
      if (table.columns.size === 0) throw new BreError('DB_QUERY_FAILED', `${this.#where()}: cannot create the table ${name}`);
    }
    return table;
  }

  async #describe(session: DbSession, name: string): Promise<Table & { unique: Set<string>; notNullWithoutDefault: string[] }> {
    const d = this.dialect.sink.describe(name, this.target.schema);
    const rows = (await session.query<{ name: string; type: string; nullable: unknown; has_default: unknown }>(d.sql, d.params)).rows;
    const columns = new Map<string, { type: string; kind: ColumnKind | undefined }>();
    const described: TableColumn[] = rows.map((r) => ({ name: r.name, type: String(r.type).toLowerCase(), nullable: truthy(r.nullable), hasDefault: truthy(r.has_default) }));
    for (const c of described) columns.set(c.name, { type: c.type, kind: this.dialect.sink.kindOf(c.type) });
    let owned = false;
    const uniqueCols = new Set<string>();
    if (columns.size > 0) {
      const c = this.dialect.sink.comment(name, this.target.schema);
      owned = (await session.query<{ comment: string | null }>(c.sql, c.params)).rows[0]?.comment === OWNED_COMMENT;
      const u = this.dialect.sink.uniqueColumns(name, this.target.schema);
      for (const r of (await session.query<{ name: string }>(u.sql, u.params)).rows) uniqueCols.add(r.name);
    }
    return { sql: this.#quoted(name), name, owned, columns, unique: uniqueCols, notNullWithoutDefault: described.filter((c) => !c.nullable && !c.hasDefault).map((c) => c.name) };
  }

  /** A user's own table must take the rows as they are: the key, a unique index on it, nothing required that the sink does not write. */
  #check(t: Table & Partial<{ unique: Set<string>; notNullWithoutDefault: string[] }>, keys: readonly string[], mustBeUnique: boolean): void {
    if (t.owned) return;
    for (const k of keys) {
      const c = t.columns.get(k);
      if (!c) this.#mismatch(t, `it has no column ${k}`, `add the column ${k} (${this.dialect.sink.keyType}) or name another table with --sink-table`);
      else if (!(k === 'row' ? this.dialect.sink.holds(c.type, 'int64') : this.dialect.sink.isKeyType(c.type))) this.#mismatch(t, `its column ${k} is ${c.type}, which cannot hold the ${k === 'row' ? 'row numbers' : 'keys'}`, `make it ${k === 'row' ? 'bigint' : this.dialect.sink.keyType}`);
    }
    if (mustBeUnique && keys.length === 1 && !t.unique?.has(keys[0])) {
      this.#mismatch(t, `no unique index or primary key is on ${keys[0]} alone, so a row written again would be a second row`, `ALTER TABLE ${t.name} ADD PRIMARY KEY (${keys[0]}) (or a UNIQUE index on it)`);
    }
    const written = new Set([...keys, ...(t === this.#errors ? errorColumns(this.shape.key, this.shape.sampled) : t === this.#transactions ? transactionColumns(this.shape.key) : resultFixedColumns(this.shape.sampled)).map((c) => c.name)]);
    const required = (t.notNullWithoutDefault ?? []).filter((c) => !written.has(c) && !c.includes('.'));
    if (required.length > 0) this.#mismatch(t, `its column${required.length > 1 ? 's' : ''} ${required.join(', ')} ${required.length > 1 ? 'are' : 'is'} NOT NULL without a default, and the sink does not write ${required.length > 1 ? 'them' : 'it'}`, 'give them a default or let them be NULL');
    for (const c of written) {
      const have = t.columns.get(c);
      const want = [...resultFixedColumns(this.shape.sampled), ...errorColumns(this.shape.key, this.shape.sampled), ...transactionColumns(this.shape.key)].find((x) => x.name === c);
      if (have && want && !keys.includes(c) && !this.dialect.sink.holds(have.type, want.kind)) {
        this.#mismatch(t, `its column ${c} is ${have.type}, which cannot hold ${describeKind(want.kind)}`, `make it ${this.dialect.sink.typeOf(want.kind)}, or drop it`);
      }
    }
  }

  #mismatch(t: { name: string }, problem: string, fix: string): never {
    throw new BreError('SINK_TABLE_MISMATCH', `the sink table ${t.name} at ${this.target.url.display} was not made by bre-batch and cannot take its rows: ${problem}. Fix: ${fix}. bre-batch never alters a table it did not create; another --sink-table name makes a new one.`, { field: 'sink-table' });
  }

  /**
   * The result fields of a batch, each in a column of a kind that holds its values: a new field gets a new
   * nullable column (in bre-batch's own table), a field whose values widened gets a wider type. A user's table
   * keeps the columns it has: a field without one is only in `result`; one whose column cannot hold it stops.
   */
  async #fitColumns(session: DbSession, results: readonly ResultItem[]): Promise<void> {
    // By stage, then field (no `stage.field` text made per value), in the order the fields first appear.
    const byStage = new Map<string, Map<string, { header: string; bits: number }>>();
    const types: { header: string; bits: number }[] = [];
    for (const r of results) {
      for (const stage in r.stages) {
        const fields = r.stages[stage];
        let seen = byStage.get(stage);
        if (!seen) byStage.set(stage, (seen = new Map()));
        for (const field in fields) {
          const bit = typeBit(fields[field]);
          if (bit === 0) continue;
          let e = seen.get(field);
          if (!e) {
            seen.set(field, (e = { header: `${stage}.${field}`, bits: 0 }));
            types.push(e);
          }
          e.bits |= bit;
        }
      }
    }
    const t = this.#results;
    for (const { header, bits } of types) {
      const kind = kindOfTypes(bits);
      const name = this.#fields.get(header) ?? columnName(header, this.dialect.maxIdentifier);
      const have = t.columns.get(name);
      if (!t.owned) {
        if (have) {
          this.#bind(header, name);
          if (!this.dialect.sink.holds(have.type, kind)) {
            throw new BreError('SINK_REJECTED', `the sink table ${t.name} at ${this.target.url.display} has a column ${name} of type ${have.type}, and the field now holds ${describeKind(kind)}: make the column ${this.dialect.sink.typeOf(kind)} (or text), then re-run the same command to resume`, { field: name });
          }
        }
        continue;
      }
      if (!have) {
        const def = { name, type: this.dialect.sink.typeOf(kind) };
        await this.#ddl(session, this.dialect.sink.addColumn(t.sql, def));
        t.columns.set(name, { type: def.type, kind });
      } else if (have.kind !== undefined && widerKind(have.kind, kind) !== have.kind) {
        const wider = widerKind(have.kind, kind);
        const def = { name, type: this.dialect.sink.typeOf(wider) };
        await this.#ddl(session, this.dialect.sink.widenColumn(t.sql, def));
        t.columns.set(name, { type: def.type, kind: wider });
      }
      this.#bind(header, name);
    }
  }

  /**
   * A field's column. A shortened column found at open is known only by its own name until its field is seen:
   * that name goes, or the column would be written twice in one statement.
   */
  #bind(header: string, name: string): void {
    if (header !== name) this.#fields.delete(name);
    this.#fields.set(header, name);
  }

  /** A change of bre-batch's own table; another worker may have made the same change first. */
  async #ddl(session: DbSession, sql: string): Promise<void> {
    try {
      await session.query(sql);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '42701' || code === 'ER_DUP_FIELDNAME') return;
      throw err;
    }
  }

  // -- the rows --------------------------------------------------------------------------------------------

  async #writeResults(session: DbSession, results: readonly ResultItem[]): Promise<void> {
    if (results.length === 0) return;
    const t = this.#results;
    const key = this.shape.key;
    const now = sqlTimestamp(Date.now());
    const fixed = resultFixedColumns(this.shape.sampled).filter((c) => t.columns.has(c.name));
    const fields = [...this.#fields].filter(([, col]) => t.columns.has(col));
    const columns = [key, ...fixed.map((c) => c.name), ...fields.map(([, col]) => col)];
    const kinds = fields.map(([, col]) => t.columns.get(col)!.kind ?? 'string');
    const stages = fields.map(([header]) => header.slice(0, header.indexOf('.')));
    const names = fields.map(([header]) => header.slice(header.indexOf('.') + 1));
    const rows = results.map((r) => {
      const values: unknown[] = [r.key];
      for (const c of fixed) {
        switch (c.name) {
          case 'row': values.push(r.row); break;
          case 'stratum': values.push(r.stratum ?? null); break;
          case 'weight': values.push(r.weight ?? null); break;
          case 'result': values.push(r.stagesText ?? JSON.stringify(r.stages)); break;
          case 'loaded_at': values.push(now); break;
        }
      }
      for (let i = 0; i < kinds.length; i += 1) values.push(sinkValue(kinds[i], r.stages[stages[i]]?.[names[i]]));
      return values;
    });
    await this.#upsert(session, t, columns, [key], rows);
    // A row that failed before and succeeds now leaves NAME_errors in this same transaction.
    await this.#deleteIn(session, this.#errors, 'row', results.map((r) => r.row));
    if (this.#transactions) await this.#replaceTransactions(session, this.#transactions, results);
  }

  async #replaceTransactions(session: DbSession, t: Table, results: readonly ResultItem[]): Promise<void> {
    const key = this.shape.key;
    await this.#deleteIn(session, t, key, results.map((r) => r.key));
    const cols = transactionColumns(key).filter((c) => t.columns.has(c.name));
    const rows: unknown[][] = [];
    for (const r of results) {
      (r.transactions ?? []).forEach((tx, seq) => {
        const record: Record<string, unknown> = { ...tx, [key]: r.key, seq, timestamp_offset: tx.timestamp === null ? null : isoOffset(tx.timestamp) };
        rows.push(cols.map((c) => (c.name === key ? r.key : sinkValue(c.kind, record[c.name]))));
      });
    }
    await this.#upsert(session, t, cols.map((c) => c.name), [key, 'seq'], rows);
  }

  async #writeErrors(session: DbSession, errors: readonly ErrorLine[]): Promise<void> {
    if (errors.length === 0) return;
    const t = this.#errors;
    const now = sqlTimestamp(Date.now());
    const cols = errorColumns(this.shape.key, this.shape.sampled).filter((c) => t.columns.has(c.name));
    const rows = errors.map((e) => cols.map((c) => {
      if (c.name === 'loaded_at') return now;
      const v = c.name === this.shape.key ? e.key : (e as Record<string, unknown>)[c.name];
      return sinkValue(t.owned ? c.kind : (t.columns.get(c.name)!.kind ?? c.kind), v);
    }));
    await this.#upsert(session, t, cols.map((c) => c.name), ['row'], rows);
  }

  async #upsert(session: DbSession, t: Table, columns: readonly string[], key: readonly string[], rows: readonly unknown[][]): Promise<void> {
    if (this.dialect.bulkUpsert && rows.length >= BULK_MIN_ROWS) {
      await this.dialect.bulkUpsert(session, t.sql, columns, key, rows, t.owned);
      return;
    }
    const per = Math.max(1, Math.min(MAX_STATEMENT_ROWS, Math.floor(this.dialect.maxParams / columns.length)));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      await session.query(this.dialect.sink.upsert(t.sql, columns, key, chunk.length), chunk.flat());
    }
  }

  async #deleteIn(session: DbSession, t: Table, column: string, values: readonly unknown[]): Promise<void> {
    const per = Math.min(MAX_STATEMENT_ROWS * 10, this.dialect.maxParams);
    for (let i = 0; i < values.length; i += per) {
      const chunk = values.slice(i, i + per);
      await session.query(this.dialect.sink.deleteIn(t.sql, column, chunk.length), chunk);
    }
  }

  // -- connection losses -----------------------------------------------------------------------------------

  async #withRetry<T>(work: (session: DbSession) => Promise<T>): Promise<T> {
    let since: number | undefined;
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (!this.#session) {
          this.#session = await openSession(this.target.url);
          if (since !== undefined) this.reconnects += 1;
        }
        const out = await work(this.#session);
        if (since !== undefined) this.log(`sink: ${this.dialect.label} at ${this.target.url.display} is back; writing goes on`);
        return out;
      } catch (err) {
        if (isBreError(err) && err.code !== 'DB_UNREACHABLE') throw err;
        const lost = isBreError(err) || isConnectionLoss(err);
        if (!lost && !isRetryableConflict(err)) {
          throw new BreError('SINK_REJECTED', `${this.#where()} refused a write to ${this.describe()}: ${queryReason(err)}. Fix the table (or name another with --sink-table), then re-run the same command: the rows are in the output folder and the sink catches up.`, { cause: err });
        }
        // A new connection for the next attempt, a conflict's too: a COPY that failed can leave node-postgres'
        // connection unusable (pg-copy-streams#115).
        this.#session?.destroy();
        this.#session = undefined;
        since ??= Date.now();
        if (Date.now() - since >= this.target.retryForMs) {
          throw new BreError('SINK_UNAVAILABLE', `${this.#where()} went away and did not come back within --sink-retry (${Math.round(this.target.retryForMs / 1000)} s): ${lost ? queryReason(err) : 'conflicts kept aborting the write'}. Nothing is lost: the rows are in the output folder; re-run the same command when the database is back (or \`bre-batch load\` the folder).`, { cause: err });
        }
        if (lost && !this.#warnedLoss) {
          this.#warnedLoss = true;
          this.log(`sink: lost the connection to ${this.dialect.label} at ${this.target.url.display} (${queryReason(err)}); connecting again for up to ${Math.round(this.target.retryForMs / 1000)} s`);
        }
        await this.sleep(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]);
      }
    }
  }
}

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't';
}

/** The last of each key in a batch: one statement may not touch a row twice. */
function dedupe<T, K>(items: readonly T[], keyOf: (t: T) => K): T[] {
  const seen = new Map<K, T>();
  for (const it of items) {
    const k = keyOf(it);
    seen.delete(k);
    seen.set(k, it);
  }
  return seen.size === items.length ? [...items] : [...seen.values()];
}

function describeKind(kind: ColumnKind): string {
  switch (kind) {
    case 'boolean': return 'true/false values';
    case 'int64': return 'whole numbers';
    case 'double': return 'numbers with fractions';
    case 'string': return 'text';
    case 'json': return 'JSON objects or arrays';
    case 'timestamp_local_ms': return 'timestamps';
    case 'date': return 'dates';
  }
}
