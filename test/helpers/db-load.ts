/**
 * A sample (CSV with a header, or NDJSON) loaded into a table of a test database, with the column types a
 * user would give it: whole numbers as bigint, decimals as numeric (DECIMAL on MySQL, as many places as the
 * data has), JSON numbers with a fraction as double, booleans as boolean, nested objects and arrays as jsonb
 * (JSON on MySQL), the rest as text; `types` overrides any column. The key column gets an index (not a
 * unique one: tests load duplicate keys too). Used by the source's e2e tests and the sink's.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { openSession, parseDbUrl, type DbSession, type DialectName } from '../../src/db/index.js';

export type SampleRow = Record<string, unknown>;

export interface ColumnDef {
  readonly name: string;
  readonly type: string;
}

/** The rows of a CSV (empty cells are NULL) or NDJSON sample, in file order. */
export function readSampleRows(path: string): SampleRow[] {
  const text = readFileSync(path, 'utf8');
  if (/\.(ndjson|jsonl)$/.test(path))
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as SampleRow);
  const records = parse(text, { columns: true, skip_empty_lines: true, bom: true }) as Record<string, string>[];
  return records.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])));
}

const WHOLE = /^-?(0|[1-9]\d{0,17})$/;
const DECIMAL = /^-?(0|[1-9]\d*)\.(\d+)$/;

function inferType(values: readonly unknown[], dialect: DialectName): string {
  const present = values.filter((v) => v !== null && v !== undefined);
  const json = dialect === 'postgres' ? 'jsonb' : 'json';
  if (present.length === 0) return dialect === 'postgres' ? 'text' : 'varchar(255)';
  if (present.some((v) => typeof v === 'object')) return json;
  if (present.every((v) => typeof v === 'boolean')) return 'boolean';
  if (present.every((v) => typeof v === 'number'))
    return present.every((v) => Number.isSafeInteger(v))
      ? 'bigint'
      : dialect === 'postgres'
        ? 'double precision'
        : 'double';
  if (present.every((v) => typeof v === 'string' && WHOLE.test(v))) return 'bigint';
  if (present.every((v) => typeof v === 'string' && (WHOLE.test(v) || DECIMAL.test(v)))) {
    if (dialect === 'postgres') return 'numeric';
    let scale = 0;
    let whole = 1;
    for (const v of present as string[]) {
      const [i, f = ''] = v.replace('-', '').split('.');
      scale = Math.max(scale, f.length);
      whole = Math.max(whole, i.length);
    }
    return `decimal(${whole + scale},${scale})`;
  }
  if (present.some((v) => typeof v !== 'string')) return json;
  // MySQL indexes a VARCHAR whole; longer text goes to TEXT.
  return dialect === 'postgres' ? 'text' : present.every((v) => (v as string).length <= 255) ? 'varchar(255)' : 'text';
}

/** The columns of the rows (in order of first appearance), typed. */
function inferColumns(
  rows: readonly SampleRow[],
  dialect: DialectName,
  types: Readonly<Record<string, string>> = {},
): ColumnDef[] {
  const names: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!names.includes(k)) names.push(k);
  return names.map((name) => ({
    name,
    type:
      types[name] ??
      inferType(
        rows.map((r) => r[name]),
        dialect,
      ),
  }));
}

function q(dialect: DialectName, id: string): string {
  return dialect === 'postgres' ? `"${id.replace(/"/g, '""')}"` : `\`${id.replace(/`/g, '``')}\``;
}

function sqlValueOf(v: unknown, type: string): unknown {
  if (v === undefined || v === null) return null;
  if (/json/.test(type)) return JSON.stringify(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

export interface LoadOptions {
  /** Column -> SQL type, over the inferred one. */
  readonly types?: Readonly<Record<string, string>>;
  /** The column to index (default reference_id when there is one). */
  readonly key?: string;
}

/** Creates `table` in the database at `url` and inserts `rows`; returns the columns made. */
export async function loadRows(
  url: string,
  table: string,
  rows: readonly SampleRow[],
  opts: LoadOptions = {},
): Promise<ColumnDef[]> {
  const parsed = parseDbUrl(url, { flag: 'test' });
  const dialect = parsed.dialect;
  const columns = inferColumns(rows, dialect, opts.types);
  const session = await openSession(parsed);
  try {
    await session.query(
      `CREATE TABLE ${q(dialect, table)} (${columns.map((c) => `${q(dialect, c.name)} ${c.type}`).join(', ')})`,
    );
    const key = opts.key ?? (columns.some((c) => c.name === 'reference_id') ? 'reference_id' : undefined);
    if (key)
      await session.query(`CREATE INDEX ${q(dialect, `${table}_key`)} ON ${q(dialect, table)} (${q(dialect, key)})`);
    await insertRows(session, dialect, table, columns, rows);
  } finally {
    await session.close();
  }
  return columns;
}

/** Inserts `rows` (columns as made by loadRows), 500 a statement. */
async function insertRows(
  session: DbSession,
  dialect: DialectName,
  table: string,
  columns: readonly ColumnDef[],
  rows: readonly SampleRow[],
): Promise<void> {
  const per = 500;
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const params: unknown[] = [];
    const tuples = chunk.map(
      (r) =>
        `(${columns
          .map((c) => {
            params.push(sqlValueOf(r[c.name], c.type));
            return dialect === 'postgres' ? `$${params.length}` : '?';
          })
          .join(', ')})`,
    );
    await session.query(
      `INSERT INTO ${q(dialect, table)} (${columns.map((c) => q(dialect, c.name)).join(', ')}) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
}

/** A sample file loaded into `table`; returns its rows and columns. */
export async function loadSample(
  url: string,
  table: string,
  sample: string,
  opts: LoadOptions = {},
): Promise<{ rows: SampleRow[]; columns: ColumnDef[] }> {
  const rows = readSampleRows(sample);
  return { rows, columns: await loadRows(url, table, rows, opts) };
}

/** Runs one statement on the database at `url` (a test's own setup or change). */
export async function sql(url: string, text: string, params: readonly unknown[] = []): Promise<void> {
  const session = await openSession(parseDbUrl(url, { flag: 'test' }));
  try {
    await session.query(text, params);
  } finally {
    await session.close();
  }
}
