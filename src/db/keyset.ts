/**
 * The statements a source reads a table or a query with, in key order and in short keyset pages
 * (src/input/db/): no cursor, no transaction held between pages, so a run of hours at 500 rows a minute holds
 * no snapshot (and no vacuum) back. A dialect builds them from its quoting and parameters; PostgreSQL and
 * MySQL/MariaDB share the standard form below, a database without LIMIT writes its own.
 *
 * Keys are compared by the database, in its types and collation, never in JavaScript: the page carries
 * `dense_rank()` and `count(*)` over the key, so rows whose keys the database holds equal (duplicates, or
 * 'abc' and 'ABC' under a case-insensitive collation) are known as one group without comparing text here.
 */

/** What a source reads: a table (`--table [schema.]name`) or the result of a query (`--query`). */
export type SourceRelation =
  | { readonly kind: 'table'; readonly name: string; readonly schema?: string }
  | { readonly kind: 'query'; readonly sql: string };

/** Extra columns of a page: the key's dense rank within the page, and how many of the page's rows share it. */
export const RANK_COLUMN = '__bre_rank';
export const COUNT_COLUMN = '__bre_count';

export interface KeysetSql {
  /** No rows, only the result's columns and their types (the header check, before any call). */
  probe(rel: SourceRelation): string;
  /** Every row whose key is NULL (each is an error; read first). */
  nullKeys(rel: SourceRelation, key: string): string;
  /**
   * Up to `fetch` rows in key order with RANK_COLUMN and COUNT_COLUMN, after the key given as the first
   * parameter when `after` (non-NULL keys only either way).
   */
  page(rel: SourceRelation, key: string, keyType: string, fetch: number, after: boolean): string;
  /** Every row whose key equals the first parameter (the rest of a group a page ended in). */
  group(rel: SourceRelation, key: string, keyType: string): string;
  /** `n`: the rows of the relation (--plan, the progress bar's total). */
  count(rel: SourceRelation): string;
}

export interface KeysetDialect {
  quote(identifier: string): string;
  table(name: string, schema?: string): string;
  /** The first parameter, as the key column's type compares it (a cast where the database would not). */
  keyParam(keyType: string): string;
}

/** A query as a derived table: its own trailing semicolons and blanks go, or it would not nest. */
function relationSql(d: Pick<KeysetDialect, 'table'>, rel: SourceRelation): string {
  if (rel.kind === 'table') return d.table(rel.name, rel.schema);
  return `(${rel.sql.replace(/[\s;]+$/, '')})`;
}

/** The form PostgreSQL and MySQL/MariaDB (10.2+, for window functions) both take. */
export function standardKeyset(d: KeysetDialect): KeysetSql {
  const from = (rel: SourceRelation) => `${relationSql(d, rel)} q`;
  return {
    probe: (rel) => `SELECT * FROM ${from(rel)} LIMIT 0`,
    nullKeys: (rel, key) => `SELECT * FROM ${from(rel)} WHERE q.${d.quote(key)} IS NULL`,
    page: (rel, key, keyType, fetch, after) => {
      const k = d.quote(key);
      const where = after ? `q.${k} > ${d.keyParam(keyType)}` : `q.${k} IS NOT NULL`;
      // The ranks are taken over the page only (a window over the rest of the relation would cost a sort
      // of all of it per page); the page's last group is completed by the reader (src/input/db/page.ts).
      return (
        `SELECT p.*, dense_rank() OVER (ORDER BY p.${k}) AS ${d.quote(RANK_COLUMN)}, count(*) OVER (PARTITION BY p.${k}) AS ${d.quote(COUNT_COLUMN)} ` +
        `FROM (SELECT * FROM ${from(rel)} WHERE ${where} ORDER BY q.${k} LIMIT ${Math.trunc(fetch)}) p ORDER BY p.${k}`
      );
    },
    group: (rel, key, keyType) => `SELECT * FROM ${from(rel)} WHERE q.${d.quote(key)} = ${d.keyParam(keyType)}`,
    count: (rel) => `SELECT count(*) AS n FROM ${from(rel)}`,
  };
}

/**
 * Key column types a source refuses: values with no order the reader can resume by (JSON), or bytes whose
 * text form does not compare back as bytes. Anything else orders in the database and goes back to it as text.
 */
const UNORDERABLE = /^(json|jsonb|bytea|tinyblob|blob|mediumblob|longblob|bit|xml|point|geometry)$|\[\]$/;

export function isOrderableKeyType(type: string): boolean {
  return !UNORDERABLE.test(type);
}
