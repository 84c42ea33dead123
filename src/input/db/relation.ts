/**
 * What `--table` and `--query` name, as a relation a dialect can read (src/db/keyset.ts). Pure.
 *
 * `--table` is `name` or `schema.name`; a part may be quoted to keep dots, spaces or case (`"My Schema"."Loans"`,
 * or with backticks for MySQL), a quote inside doubled. An unquoted part follows the database's own rule, as its
 * dialect declares it (`foldsUnquoted`: PostgreSQL folds it to lower case, as `psql` does; MySQL keeps it).
 */
import { BreError } from '@bre-batch/core/errors';
import { dialectNamed, type DbUrl, type DialectName, type SourceRelation } from '../../db/index.js';

/** The parts of a dotted name, quotes honoured; undefined when the text is not such a name. */
export function splitQualifiedName(text: string): { text: string; quoted: boolean }[] | undefined {
  const parts: { text: string; quoted: boolean }[] = [];
  let i = 0;
  for (;;) {
    const q = text[i];
    if (q === '"' || q === '`') {
      let out = '';
      i += 1;
      for (;;) {
        if (i >= text.length) return undefined;
        if (text[i] === q) {
          if (text[i + 1] === q) {
            out += q;
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        out += text[i];
        i += 1;
      }
      if (out === '') return undefined;
      parts.push({ text: out, quoted: true });
    } else {
      const m = /^[^."`\s]+/.exec(text.slice(i));
      if (!m) return undefined;
      parts.push({ text: m[0], quoted: false });
      i += m[0].length;
    }
    if (i === text.length) return parts;
    if (text[i] !== '.') return undefined;
    i += 1;
  }
}

export interface SourceGiven {
  readonly table?: string;
  readonly query?: string;
}

/** `--table` or `--query` (exactly one) as a relation; USAGE (exit 2) saying what was expected. */
export function parseRelation(given: SourceGiven, dialect: DialectName): SourceRelation {
  const { table, query } = given;
  if (table !== undefined && query !== undefined)
    throw new BreError('USAGE', 'Expected --table or --query with a database --input, got both');
  if (query !== undefined) {
    if (query.trim().replace(/;+\s*$/, '') === '')
      throw new BreError('USAGE', 'Expected --query to be a SELECT statement, got an empty one', { field: 'query' });
    return { kind: 'query', sql: query.trim() };
  }
  if (table === undefined)
    throw new BreError(
      'USAGE',
      "Expected --table NAME or --query 'SELECT ...' with a database --input: which rows to read",
    );
  const parts = splitQualifiedName(table.trim());
  if (!parts || parts.length > 2) {
    throw new BreError(
      'USAGE',
      `Expected --table to be NAME or SCHEMA.NAME (a part with dots, spaces or capitals in double quotes: "My Schema"."Loans"), got '${table}'`,
      { field: 'table' },
    );
  }
  const folds = dialectNamed(dialect).foldsUnquoted;
  const fold = (p: { text: string; quoted: boolean }) => (p.quoted || !folds ? p.text : p.text.toLowerCase());
  const name = fold(parts[parts.length - 1]);
  return parts.length === 2 ? { kind: 'table', schema: fold(parts[0]), name } : { kind: 'table', name };
}

/** A part as --table takes it back: bare when it is a plain name, else double-quoted. */
function shownPart(part: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(part) ? part : `"${part.replace(/"/g, '""')}"`;
}

/** The table as --table would name it (`public.loans`, `"My Schema".loans`); undefined for a query. */
export function tableName(rel: SourceRelation): string | undefined {
  if (rel.kind !== 'table') return undefined;
  return rel.schema === undefined ? shownPart(rel.name) : `${shownPart(rel.schema)}.${shownPart(rel.name)}`;
}

/** Characters of a query's text shown in a message. */
const SHOWN_QUERY = 160;

/** For messages: `table public.loans` / `the query SELECT ...` (a long query cut short). */
export function describeRelation(rel: SourceRelation): string {
  if (rel.kind === 'table') return `table ${tableName(rel)}`;
  const oneLine = rel.sql.replace(/\s+/g, ' ');
  return `the query ${oneLine.length > SHOWN_QUERY ? `${oneLine.slice(0, SHOWN_QUERY)}...` : oneLine}`;
}

/**
 * What a database input reads, for the manifest (a resume must read the same): the server, database and user
 * (the URL without its password, parameters and scheme spelling: postgresql:// is postgres://, mariadb:// is
 * mysql://), and the table as --table names it or the query's text.
 */
export function sourceIdentity(
  url: DbUrl,
  rel: SourceRelation,
): { url: string; table: string | null; query: string | null } {
  const host = url.host.includes(':') ? `[${url.host}]` : url.host;
  const user = url.user === undefined ? '' : `${encodeURIComponent(url.user)}@`;
  return {
    url: `${url.dialect}://${user}${host}:${url.port}/${encodeURIComponent(url.database)}`,
    table: tableName(rel) ?? null,
    query: rel.kind === 'query' ? rel.sql : null,
  };
}
