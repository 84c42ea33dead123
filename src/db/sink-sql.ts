/**
 * The statements the sink (src/output/sink/) writes and checks its tables with. Most are standard SQL; what a
 * database does its own way (type names, the upsert clause, how a table's comment and unique indexes are
 * read) each dialect gives to `standardSink` in its own file, as it gives its keyset statements.
 */
import type { ColumnKind } from '@bre-batch/core/types';

/**
 * A column of a table bre-batch creates.
 * @public
 */
export interface ColumnDef {
  readonly name: string;
  /** The SQL type, as `SinkSql.typeOf` or `keyType` gave it. */
  readonly type: string;
  readonly notNull?: boolean;
  /** The column's comment: for a result field's column, the field's path (`location.best_offer.loan_amount`). */
  readonly comment?: string;
}

/**
 * A column of an existing table, as the database describes it.
 * @public
 */
export interface TableColumn {
  readonly name: string;
  /** information_schema's data_type, lower case (`text`, `bigint`, `jsonb`, `varchar`, `longtext`...). */
  readonly type: string;
  readonly nullable: boolean;
  readonly hasDefault: boolean;
  /** Its comment; null when none. */
  readonly comment: string | null;
}

/** @public */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

export interface SinkSql {
  /** The SQL type of a column of that kind. */
  typeOf(kind: ColumnKind): string;
  /**
   * When bre-batch wrote a row (`loaded_at`, `updated_at`): the column type of an instant and what follows a UTC
   * wall clock (`YYYY-MM-DD HH:MM:SS.mmm`) to say it is UTC (PostgreSQL: `timestamptz`, `+00`).
   */
  readonly instant: { readonly type: string; readonly zone: string };
  /** The type of a key column bre-batch creates (text; a bounded varchar where a primary key needs one). */
  readonly keyType: string;
  /** Types a key may be written into: text of any length, or exact numbers (keys from a database's numeric key). */
  isKeyType(type: string): boolean;
  /** Whether a column of this type takes any JSON value (as JSON or as its text). */
  holdsJson(type: string): boolean;
  /** Whether a column of this type takes text of any value (results.csv's text of a mixed column). */
  holdsText(type: string): boolean;
  /** Whether a column of this type takes a value of that kind. */
  holds(type: string, kind: ColumnKind): boolean;
  /** The kind of values a column of this type is written with (undefined: a type the sink does not write). */
  kindOf(type: string): ColumnKind | undefined;
  /** CREATE TABLE IF NOT EXISTS, with its primary key and the comment that marks it as bre-batch's own. */
  createTable(table: string, columns: readonly ColumnDef[], primaryKey: readonly string[], comment: string): string[];
  /** The statements adding a nullable column, with its comment. */
  addColumn(table: string, column: ColumnDef): string[];
  /** Changes a column of bre-batch's own table to a wider type (a field that held integers now holds fractions), its comment kept. */
  widenColumn(table: string, column: ColumnDef): string;
  /** Sets a column's comment (MySQL: by a MODIFY repeating its type, `column.type`). */
  commentColumn(table: string, column: ColumnDef): string[];
  /** Renames a column in place (no copy of its values) and sets its comment; `column` is its new name and type. */
  renameColumn(table: string, from: string, column: ColumnDef): string[];
  /**
   * A lock of the whole database named `name`, held by the session until `unlock` (PostgreSQL's advisory lock,
   * MySQL's GET_LOCK): the sink's workers change a table's columns one at a time. The statement returns one row,
   * `got`, true or 1 when the lock is held (MySQL gives up after its time-out).
   */
  lock(name: string): Statement;
  unlock(name: string): Statement;
  /** One statement inserting `rows` rows of `columns`, updating every non-key column of a row whose key is there. */
  upsert(table: string, columns: readonly string[], key: readonly string[], rows: number): string;
  /** The upsert of every row of `source` (a table with these columns), as `upsert` does it. */
  upsertFrom(table: string, source: string, columns: readonly string[], key: readonly string[]): string;
  /** DELETE of the rows whose `column` is one of `n` parameters. */
  deleteIn(table: string, column: string, n: number): string;
  /** The table's columns (name, type, nullable, has_default, comment); no rows when it does not exist. */
  describe(name: string, schema: string | undefined): Statement;
  /** Rows (one column, `name`) naming each column that alone makes a unique index or primary key of the table. */
  uniqueColumns(name: string, schema: string | undefined): Statement;
  /** One row with one column, `comment`: the table's comment (null when none). */
  comment(name: string, schema: string | undefined): Statement;
}

/** What differs between databases in the sink's statements. */
export interface SinkDialectParts {
  readonly quote: (id: string) => string;
  readonly param: (i: number) => string;
  readonly types: Readonly<Record<ColumnKind, string>>;
  readonly keyType: string;
  readonly instant: SinkSql['instant'];
  /** Type names (information_schema's data_type) of each family; `number`: those that keep a fraction (MySQL would round one into an integer column). */
  readonly families: {
    readonly text: readonly string[];
    readonly json: readonly string[];
    readonly integer: readonly string[];
    readonly number: readonly string[];
    readonly boolean: readonly string[];
    readonly timestamp: readonly string[];
    readonly date: readonly string[];
  };
  /** `ON CONFLICT (k) DO UPDATE SET c = EXCLUDED.c` or `ON DUPLICATE KEY UPDATE c = VALUES(c)`. */
  readonly onConflict: (key: readonly string[], update: readonly string[]) => string;
  /** CREATE TABLE's statements after the columns' list (PostgreSQL: a COMMENT ON; MySQL: a table option). */
  readonly tableComment: (table: string, comment: string) => { readonly option?: string; readonly statement?: string };
  readonly widen: (table: string, column: ColumnDef) => string;
  /**
   * How a column's comment is written: `inline` in its definition (MySQL's `COMMENT '...'`, which a MODIFY must
   * repeat), else by a statement of its own (PostgreSQL's COMMENT ON COLUMN, kept by ALTER ... TYPE).
   */
  readonly columnComment:
    | { readonly inline: true }
    | { readonly statement: (table: string, column: string, comment: string) => string };
  readonly rename: (table: string, from: string, column: ColumnDef) => string;
  /** A string literal (MySQL reads backslashes in one as escapes, PostgreSQL does not). */
  readonly literal: (text: string) => string;
  readonly lock: SinkSql['lock'];
  readonly unlock: SinkSql['unlock'];
  readonly describe: SinkSql['describe'];
  readonly uniqueColumns: SinkSql['uniqueColumns'];
  readonly comment: SinkSql['comment'];
}

export function standardSink(p: SinkDialectParts): SinkSql {
  const q = p.quote;
  const f = p.families;
  const has = (list: readonly string[], type: string) => list.includes(type.toLowerCase());
  const inline = 'inline' in p.columnComment;
  const def = (c: ColumnDef) =>
    `${q(c.name)} ${c.type}${c.notNull ? ' NOT NULL' : ''}${inline && c.comment ? ` COMMENT ${p.literal(c.comment)}` : ''}`;
  const commentOf = (table: string, c: ColumnDef): string[] =>
    !inline && c.comment && 'statement' in p.columnComment ? [p.columnComment.statement(table, c.name, c.comment)] : [];
  return {
    typeOf: (kind) => p.types[kind],
    keyType: p.keyType,
    instant: p.instant,
    isKeyType: (type) =>
      has(f.text, type) || has(f.integer, type) || type.toLowerCase() === 'numeric' || type.toLowerCase() === 'decimal',
    holdsJson: (type) => has(f.json, type) || has(f.text, type),
    holdsText: (type) => has(f.text, type),
    holds(type, kind) {
      if (has(f.text, type)) return true;
      switch (kind) {
        case 'boolean':
          return has(f.boolean, type);
        case 'int64':
          return has(f.integer, type) || has(f.number, type);
        case 'double':
          return has(f.number, type);
        case 'json':
          return has(f.json, type);
        case 'timestamp_local_ms':
          return has(f.timestamp, type);
        case 'date':
          return has(f.date, type) || has(f.timestamp, type);
        case 'string':
          return false;
      }
    },
    kindOf(type) {
      if (has(f.boolean, type)) return 'boolean';
      if (has(f.integer, type)) return 'int64';
      if (has(f.number, type)) return 'double';
      if (has(f.text, type)) return 'string';
      if (has(f.json, type)) return 'json';
      if (has(f.timestamp, type)) return 'timestamp_local_ms';
      if (has(f.date, type)) return 'date';
      return undefined;
    },
    createTable(table, columns, primaryKey, comment) {
      const c = p.tableComment(table, comment);
      const create = `CREATE TABLE IF NOT EXISTS ${table} (${columns.map(def).join(', ')}, PRIMARY KEY (${primaryKey.map(q).join(', ')}))${c.option ? ` ${c.option}` : ''}`;
      return [create, ...(c.statement ? [c.statement] : []), ...columns.flatMap((col) => commentOf(table, col))];
    },
    addColumn: (table, column) => [`ALTER TABLE ${table} ADD COLUMN ${def(column)}`, ...commentOf(table, column)],
    widenColumn: (table, column) => p.widen(table, column),
    commentColumn: (table, column) => (inline ? [p.widen(table, column)] : commentOf(table, column)),
    renameColumn: (table, from, column) => [p.rename(table, from, column), ...commentOf(table, column)],
    lock: p.lock,
    unlock: p.unlock,
    upsert(table, columns, key, rows) {
      const width = columns.length;
      const tuples: string[] = [];
      for (let r = 0; r < rows; r += 1) {
        const ps: string[] = [];
        for (let c = 0; c < width; c += 1) ps.push(p.param(r * width + c + 1));
        tuples.push(`(${ps.join(', ')})`);
      }
      const update = columns.filter((c) => !key.includes(c));
      return `INSERT INTO ${table} (${columns.map(q).join(', ')}) VALUES ${tuples.join(', ')} ${p.onConflict(key, update)}`;
    },
    upsertFrom(table, source, columns, key) {
      const cols = columns.map(q).join(', ');
      return `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM ${source} ${p.onConflict(
        key,
        columns.filter((c) => !key.includes(c)),
      )}`;
    },
    deleteIn: (table, column, n) =>
      `DELETE FROM ${table} WHERE ${q(column)} IN (${Array.from({ length: n }, (_, i) => p.param(i + 1)).join(', ')})`,
    describe: p.describe,
    uniqueColumns: p.uniqueColumns,
    comment: p.comment,
  };
}
