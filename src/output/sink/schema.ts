/**
 * The sink's tables, made or checked before any call: bre-batch's own tables are created (marked by their
 * comment) with a column for every result field the stages declare, null or not, and get a column for each
 * field met that none declared (each column's comment names its field); a user's own table is checked to take
 * the rows as they are and never altered. The batches are written by ./batch.ts, the connection kept by
 * ./writer.ts.
 */
import { BreError } from '@bre-batch/core/errors';
import type { DbSession, DbUrl, Dialect } from '../../db/index.js';
import type { ColumnKind } from '@bre-batch/core/types';
import { kindOfTypes } from '../files/parquet/schema.js';
import { PROVENANCE_COLUMNS } from '@bre-batch/formats';
import { typeBit } from '../journal/columns.js';
import {
  declaredColumnNames,
  errorColumns,
  hashedColumnName,
  isOldColumnName,
  LOADS_TABLE,
  newColumnName,
  OWNED_COMMENT,
  plainColumnName,
  reservedNames,
  resultFixedColumns,
  transactionColumns,
  widerKind,
  type SinkColumn,
  type SinkNames,
} from './tables.js';
import { describeKind, describeTable, withColumnsLock, type DescribedTable, type Table } from './table-read.js';

export type { Table } from './table-read.js';

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
  /**
   * The result fields the pipeline's stages declare (`stage.field`, in pipeline order, typed): NAME has their
   * columns from the first night. Any other field gets its column when it is first met.
   */
  readonly declared?: readonly DeclaredField[];
}

export interface DeclaredField {
  /** As in results.csv's header: `<stage>.<field>`. */
  readonly header: string;
  readonly kind: ColumnKind;
}

export const LOAD_COLUMNS: readonly SinkColumn[] = [
  { name: 'sink_table', kind: 'string' },
  { name: 'folder', kind: 'string' },
  { name: 'host', kind: 'string' },
  { name: 'path', kind: 'string' },
  /** The folder's run (manifest.json's run_id): the value its rows carry in their run_id column. */
  { name: 'run_id', kind: 'string' },
  { name: 'results_file', kind: 'string' },
  { name: 'results_bytes', kind: 'int64' },
  { name: 'errors_file', kind: 'string' },
  { name: 'errors_bytes', kind: 'int64' },
  { name: 'batches', kind: 'int64' },
  { name: 'updated_at', kind: 'timestamp_local_ms' },
];

export class SinkSchema {
  results!: Table;
  errors!: Table;
  transactions: Table | undefined;
  loads!: Table;
  /**
   * Result fields by their `stage.field` header: the column they go in. A column of bre-batch's own table whose
   * field is not known yet (no comment names it; one an earlier release made) is here under `.COLUMN` (no
   * stage: written null, as the field is absent) until a field whose earlier name it has is met.
   */
  readonly fields = new Map<string, string>();
  /** Names a result field's column may not take: the key and the fixed columns. */
  #reserved = new Set<string>();
  /**
   * Fixed columns of bre-batch's own NAME that an earlier release gave to a result field (a stage `run` with a
   * field `id` got `run_id`): the field keeps its column, and the rows' run is not written to NAME.
   */
  readonly heldByFields = new Set<string>();

  private constructor(
    readonly dialect: Dialect,
    readonly target: SinkTarget,
    readonly shape: SinkShape,
    readonly names: SinkNames,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Makes or checks the tables on `session`: a user's table that cannot take the rows is SINK_TABLE_MISMATCH
   * (exit 2, before any call).
   */
  static async prepare(
    session: DbSession,
    dialect: Dialect,
    target: SinkTarget,
    shape: SinkShape,
    names: SinkNames,
    log: (line: string) => void = () => undefined,
  ): Promise<SinkSchema> {
    const s = new SinkSchema(dialect, target, shape, names, log);
    await s.#prepare(session);
    return s;
  }

  /** `the sink PostgreSQL at postgres://...`, for messages. */
  where(): string {
    return `the sink ${this.dialect.label} at ${this.target.url.display}`;
  }

  /** The results table as the commit table names it. */
  sinkName(): string {
    return this.target.schema ? `${this.target.schema}.${this.names.results}` : this.names.results;
  }

  #quoted(name: string): string {
    return this.dialect.table(name, this.target.schema);
  }

  async #prepare(session: DbSession): Promise<void> {
    const key = this.shape.key;
    const col = (c: SinkColumn, notNull = false) => ({
      name: c.name,
      type: INSTANTS.has(c.name) ? this.dialect.sink.instant.type : this.dialect.sink.typeOf(c.kind),
      notNull,
    });
    const keyCol = { name: key, type: this.dialect.sink.keyType, notNull: true };
    this.#reserved = reservedNames(key);
    const fields = this.shape.declared ?? [];
    const names = declaredColumnNames(
      fields.map((f) => f.header),
      this.dialect.maxIdentifier,
      this.#reserved,
    );
    const declared = fields.map((f, i) => ({
      name: names[i],
      type: this.dialect.sink.typeOf(f.kind),
      comment: f.header,
      notNull: false,
    }));
    // Each table is checked before the next is made: a user's table refused leaves nothing new behind.
    this.results = await this.#table(
      session,
      this.names.results,
      [keyCol, ...resultFixedColumns(this.shape.sampled).map((c) => col(c)), ...declared],
      [key],
    );
    this.#check(this.results, [key], true);
    if (this.results.owned) {
      this.#refuseOldNames(this.results);
      for (const c of PROVENANCE_COLUMNS)
        if (this.results.columns.get(c.name)?.comment?.includes('.')) {
          this.heldByFields.add(c.name);
          this.#reserved.delete(c.name);
          this.log(
            `sink: ${this.results.name}'s column ${c.name} holds the field ${this.results.columns.get(c.name)!.comment} (an earlier release named it so): the rows' ${c.name} is not written to ${this.results.name}`,
          );
        }
      // A table made before rows carried their run gets its columns as a new field would: added, under the lock.
      this.results = await this.#addFixed(
        session,
        this.results,
        resultFixedColumns(this.shape.sampled).map((c) => col(c)),
      );
    }
    this.errors = await this.#table(
      session,
      this.names.errors,
      errorColumns(key, this.shape.sampled).map((c) => col(c, c.name === 'row')),
      ['row'],
    );
    this.#check(this.errors, ['row'], true);
    if (this.errors.owned)
      this.errors = await this.#addFixed(
        session,
        this.errors,
        errorColumns(key, this.shape.sampled).map((c) => col(c)),
      );
    if (this.shape.transactions) {
      this.transactions = await this.#table(
        session,
        this.names.transactions,
        transactionColumns(key).map((c) => (c.name === key ? keyCol : col(c, c.name === 'seq'))),
        [key, 'seq'],
      );
      this.#check(this.transactions, [key], false);
    }
    this.loads = await this.#table(
      session,
      LOADS_TABLE,
      LOAD_COLUMNS.map((c) =>
        c.name === 'sink_table' || c.name === 'folder'
          ? { name: c.name, type: this.dialect.sink.keyType, notNull: true }
          : col(c),
      ),
      ['sink_table', 'folder'],
    );
    if (!this.loads.owned)
      this.#mismatch(
        this.loads,
        `${LOADS_TABLE} is the commit table bre-batch keeps; a table of that name that bre-batch did not create is in the way`,
        `rename or drop it`,
      );
    this.loads = await this.#addFixed(
      session,
      this.loads,
      LOAD_COLUMNS.map((c) => col(c)),
    );
    if (this.results.owned) {
      this.#bindFromTable();
      // A table made before a field was declared (or by an earlier release) gets its column now, under the lock.
      await this.#fit(session, this.shape.declared ?? [], true);
    } else {
      // A user's table may name its columns as results.csv does (`stage.field`): they take their fields.
      for (const c of this.results.columns.keys())
        if (!this.#reserved.has(c) && isOldColumnName(c)) this.fields.set(c, c);
    }
  }

  /**
   * bre-batch's own table from before the plain column names: renaming columns under a user's queries and views
   * is theirs to decide, so the run stops before any call with the statements that would do it.
   */
  #refuseOldNames(t: Table): void {
    const old = [...t.columns.keys()].filter(isOldColumnName);
    if (old.length === 0) return;
    const renames = old.map(
      (c) =>
        `ALTER TABLE ${t.sql} RENAME COLUMN ${this.dialect.quote(c)} TO ${newColumnName(c, this.dialect.maxIdentifier, new Set([...this.#reserved, ...t.columns.keys()]))};`,
    );
    throw new BreError(
      'SINK_TABLE_MISMATCH',
      `the sink table ${t.name} at ${this.target.url.display} was made by an earlier bre-batch with result columns named as in results.csv (${old
        .slice(0, 3)
        .map((c) => `"${c}"`)
        .join(
          ', ',
        )}${old.length > 3 ? ', ...' : ''}); its result columns now have plain names (location_decision), and bre-batch does not rename columns on its own. Fix: rename them (docs/databases.md: Writing into tables): ${renames.join(' ')} Or name a new table with --sink-table.`,
      { field: 'sink-table' },
    );
  }

  /**
   * bre-batch's own table with every fixed column of `columns` it lacks added (nullable: rows written before
   * have none), under the lock and against the table as it is then (another worker may have added them first);
   * a column a field holds (`heldByFields`) is left to it.
   */
  async #addFixed(session: DbSession, t: Table, columns: readonly { name: string; type: string }[]): Promise<Table> {
    const missing = (x: Table) => columns.filter((c) => !x.columns.has(c.name) && !this.heldByFields.has(c.name));
    if (missing(t).length === 0) return t;
    return withColumnsLock(session, this.dialect, t, this.where(), async () => {
      const now = await this.#describe(session, t.name);
      const added = missing(now);
      if (added.length === 0) return now;
      for (const c of added)
        await this.#ddl(session, this.dialect.sink.addColumn(t.sql, { name: c.name, type: c.type }));
      this.log(
        `sink: ${added.map((c) => `column ${c.name} (${c.type})`).join(', ')} added to ${t.name} (made by an earlier bre-batch)`,
      );
      return this.#describe(session, t.name);
    });
  }

  /** The table as it is, made first (with its comment) when it is not there. */
  async #table(
    session: DbSession,
    name: string,
    columns: readonly { name: string; type: string; notNull: boolean }[],
    primaryKey: readonly string[],
  ): Promise<Table> {
    let table = await this.#describe(session, name);
    if (table.columns.size === 0) {
      try {
        const statements = this.dialect.sink.createTable(this.#quoted(name), columns, primaryKey, OWNED_COMMENT);
        // Another worker starting at the same moment never sees the table without the comment that says it is
        // bre-batch's own.
        await this.#atOnce(session, statements);
      } catch (err) {
        // Another worker made it at the same moment (PostgreSQL may say so with a unique violation).
        if (this.dialect.classify(err) === 'lost') throw err;
      }
      table = await this.#describe(session, name);
      if (table.columns.size === 0)
        throw new BreError('DB_QUERY_FAILED', `${this.where()}: cannot create the table ${name}`);
    }
    return table;
  }

  #describe(session: DbSession, name: string): Promise<DescribedTable> {
    return describeTable(session, this.dialect, name, this.target.schema);
  }

  /** A user's own table must take the rows as they are: the key, a unique index on it, nothing required that the sink does not write. */
  #check(
    t: Table & Partial<{ unique: Set<string>; notNullWithoutDefault: string[] }>,
    keys: readonly string[],
    mustBeUnique: boolean,
  ): void {
    if (t.owned) return;
    for (const k of keys) {
      const c = t.columns.get(k);
      if (!c)
        this.#mismatch(
          t,
          `it has no column ${k}`,
          `add the column ${k} (${this.dialect.sink.keyType}) or name another table with --sink-table`,
        );
      else if (!(k === 'row' ? this.dialect.sink.holds(c.type, 'int64') : this.dialect.sink.isKeyType(c.type)))
        this.#mismatch(
          t,
          `its column ${k} is ${c.type}, which cannot hold the ${k === 'row' ? 'row numbers' : 'keys'}`,
          `make it ${k === 'row' ? 'bigint' : this.dialect.sink.keyType}`,
        );
    }
    if (mustBeUnique && keys.length === 1 && !t.unique?.has(keys[0])) {
      this.#mismatch(
        t,
        `no unique index or primary key is on ${keys[0]} alone, so a row written again would be a second row`,
        `ALTER TABLE ${t.name} ADD PRIMARY KEY (${keys[0]}) (or a UNIQUE index on it)`,
      );
    }
    const written = new Set([
      ...keys,
      ...(t === this.errors
        ? errorColumns(this.shape.key, this.shape.sampled)
        : t === this.transactions
          ? transactionColumns(this.shape.key)
          : resultFixedColumns(this.shape.sampled)
      ).map((c) => c.name),
    ]);
    const required = (t.notNullWithoutDefault ?? []).filter((c) => !written.has(c) && !c.includes('.'));
    if (required.length > 0)
      this.#mismatch(
        t,
        `its column${required.length > 1 ? 's' : ''} ${required.join(', ')} ${required.length > 1 ? 'are' : 'is'} NOT NULL without a default, and the sink does not write ${required.length > 1 ? 'them' : 'it'}`,
        'give them a default or let them be NULL',
      );
    for (const c of written) {
      const have = t.columns.get(c);
      const want = [
        ...resultFixedColumns(this.shape.sampled),
        ...errorColumns(this.shape.key, this.shape.sampled),
        ...transactionColumns(this.shape.key),
      ].find((x) => x.name === c);
      if (have && want && !keys.includes(c) && !this.dialect.sink.holds(have.type, want.kind)) {
        this.#mismatch(
          t,
          `its column ${c} is ${have.type}, which cannot hold ${describeKind(want.kind)}`,
          `make it ${this.dialect.sink.typeOf(want.kind)}, or drop it`,
        );
      }
    }
  }

  #mismatch(t: { name: string }, problem: string, fix: string): never {
    throw new BreError(
      'SINK_TABLE_MISMATCH',
      `the sink table ${t.name} at ${this.target.url.display} was not made by bre-batch and cannot take its rows: ${problem}. Fix: ${fix}. bre-batch never alters a table it did not create; another --sink-table name makes a new one.`,
      { field: 'sink-table' },
    );
  }

  /**
   * The result fields of a batch, each in a column of a kind that holds its values: a new field gets a new
   * nullable column (in bre-batch's own table), a field whose values widened gets a wider type. A user's table
   * keeps the columns it has: a field without one is only in `result`; one whose column cannot hold it stops.
   */
  async fitColumns(
    session: DbSession,
    results: readonly { readonly stages: Record<string, Record<string, unknown>> }[],
  ): Promise<void> {
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
    await this.#fit(
      session,
      types.map(({ header, bits }) => ({ header, kind: kindOfTypes(bits) })),
      false,
    );
  }

  /**
   * Gives each field a column that holds its kind. bre-batch's own table: a field without one gets a new column
   * (its comment the field), one whose values need a wider type gets it, both under the lock and against the
   * table as it is then (another worker may have done it first). A user's table keeps the columns it has.
   */
  async #fit(session: DbSession, wanted: readonly DeclaredField[], declared: boolean): Promise<void> {
    if (!this.results.owned) return this.#fitUsers(wanted);
    const narrow = (name: string | undefined, kind: ColumnKind) => {
      const have = name === undefined ? undefined : this.results.columns.get(name);
      return have === undefined || (have.kind !== undefined && widerKind(have.kind, kind) !== have.kind);
    };
    if (!wanted.some((w) => narrow(this.#columnOf(w.header), w.kind))) return;
    await this.#locked(session, async () => {
      // The table as it is now: another worker may have added or widened a column while this one waited.
      const now = await this.#describe(session, this.results.name);
      this.results = { ...this.results, columns: now.columns };
      this.#bindFromTable();
      const t = this.results;
      for (const w of wanted) {
        let name = this.#columnOf(w.header);
        if (name === undefined) {
          name = newColumnName(w.header, this.dialect.maxIdentifier, new Set([...this.#reserved, ...t.columns.keys()]));
          const def = { name, type: this.dialect.sink.typeOf(w.kind), comment: w.header };
          await this.#ddl(session, this.dialect.sink.addColumn(t.sql, def));
          t.columns.set(name, { type: def.type, kind: w.kind, comment: w.header });
          this.#bind(w.header, name);
          if (declared)
            this.log(`sink: column ${name} (${def.type}) added to ${t.name} for the declared field ${w.header}`);
          else this.#say(`new field ${w.header}: column ${name} (${def.type}) added to ${t.name}`);
        } else if (narrow(name, w.kind)) {
          const have = t.columns.get(name)!;
          const wider = widerKind(have.kind!, w.kind);
          const def = {
            name,
            type: this.dialect.sink.typeOf(wider),
            ...(have.comment ? { comment: have.comment } : {}),
          };
          await this.#ddl(session, this.dialect.sink.widenColumn(t.sql, def));
          t.columns.set(name, { type: def.type, kind: wider, comment: have.comment });
          this.#say(
            `column ${name} of ${t.name} widened from ${have.type} to ${def.type}: field ${w.header} now holds ${describeKind(w.kind)}`,
          );
        }
      }
    });
  }

  /** A user's table: each field goes in the column named for it, if there is one that holds it; nothing is added. */
  #fitUsers(wanted: readonly DeclaredField[]): void {
    const t = this.results;
    for (const { header, kind } of wanted) {
      const name =
        this.fields.get(header) ??
        [plainColumnName(header), hashedColumnName(header, this.dialect.maxIdentifier, this.#reserved), header].find(
          (c) => !this.#reserved.has(c) && t.columns.has(c),
        );
      if (name === undefined) continue;
      this.#bind(header, name);
      const have = t.columns.get(name)!;
      if (!this.dialect.sink.holds(have.type, kind)) {
        throw new BreError(
          'SINK_REJECTED',
          `the sink table ${t.name} at ${this.target.url.display} has a column ${name} of type ${have.type}, and the field now holds ${describeKind(kind)}: make the column ${this.dialect.sink.typeOf(kind)} (or text), then re-run the same command to resume`,
          { field: name },
        );
      }
    }
  }

  /** Columns added or widened while the run went (not those declared): told once each, in the log and the summary. */
  readonly changes: string[] = [];

  #say(what: string): void {
    this.changes.push(what);
    this.log(`sink: ${what}`);
  }

  /**
   * bre-batch's own table's columns bound to the fields their comments name; a column without one (an earlier
   * release's) waits under `.COLUMN` for a field whose earlier name it has.
   */
  #bindFromTable(): void {
    const bound = new Set(this.fields.values());
    for (const [name, c] of this.results.columns) {
      if (this.#reserved.has(name) || bound.has(name)) continue;
      this.fields.set(c.comment?.includes('.') ? c.comment : `.${name}`, name);
    }
  }

  /** The column a field has in bre-batch's own table: bound already, or one an earlier release named for it. */
  #columnOf(header: string): string | undefined {
    const bound = this.fields.get(header);
    if (bound !== undefined) return bound;
    const old = hashedColumnName(header, this.dialect.maxIdentifier, this.#reserved);
    if (!this.fields.has(`.${old}`)) return undefined;
    this.#bind(header, old);
    return old;
  }

  /**
   * A field's column. A column found at open is known only by its own name until its field is seen: that entry
   * goes, or the column would be written twice in one statement.
   */
  #bind(header: string, name: string): void {
    for (const [h, c] of this.fields) if (c === name && h !== header) this.fields.delete(h);
    this.fields.set(header, name);
  }

  /** `work` under the lock on the columns of NAME (./table-read.ts), outside any transaction. */
  #locked(session: DbSession, work: () => Promise<void>): Promise<void> {
    return withColumnsLock(session, this.dialect, this.results, this.where(), work);
  }

  /**
   * A change of bre-batch's own table; another worker of an earlier release (no lock) may have made it first.
   * A column and its comment at once on PostgreSQL (its DDL is transactional): a worker killed between the two
   * never leaves a column no comment names, which the next worker could not tell from a user's.
   */
  async #ddl(session: DbSession, statements: string | readonly string[]): Promise<void> {
    const all = typeof statements === 'string' ? [statements] : statements;
    try {
      await this.#atOnce(session, all);
    } catch (err) {
      if (this.dialect.classify(err) !== 'exists') throw err;
      // The column was there (an earlier release's worker, no lock): its comment is still this one's to set.
      if (all.length > 1 && this.dialect.name === 'postgres')
        for (const sql of all.slice(1)) await this.#ddl(session, sql);
    }
  }

  /** Statements at once where DDL is transactional (PostgreSQL), else one by one (MySQL commits each itself). */
  async #atOnce(session: DbSession, statements: readonly string[]): Promise<void> {
    if (statements.length > 1 && this.dialect.name === 'postgres')
      await session.transaction(async () => {
        for (const sql of statements) await session.query(sql);
      });
    else for (const sql of statements) await session.query(sql);
  }
}

/** Columns of when bre-batch wrote a row: instants (./tables.ts). */
const INSTANTS = new Set(['loaded_at', 'updated_at']);
