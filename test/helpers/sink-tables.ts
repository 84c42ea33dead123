/**
 * The database sink's tables read back and compared with the output folders they were written from, value
 * for value with types: NAME against results.ndjson (the key, `row`, `result` = `stages`, one typed column per
 * result field), NAME_errors against errors.ndjson, NAME_transactions against transactions.csv. Each check
 * returns a list of problems (empty when it holds), so that a failing test shows what differs.
 *
 * Tables are read through the project's own session (src/db), which gives bigint as exact text, jsonb as
 * objects and timestamps as ISO text. Each field's column is the one whose comment names the field; the kind its
 * values need is worked out here on its own (booleans, whole numbers, numbers, JSON, else text: results.parquet's
 * rule), not taken from src/, and the column must hold them (a declared column may be wider than its values).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'csv-parse/sync';
import { openSession, parseDbUrl, type DbSession, type DialectName } from '../../src/db/index.js';
import { journalText } from './output.js';

type Kind = 'boolean' | 'int64' | 'double' | 'string' | 'json';

interface ResultLine {
  row: number;
  key: string | null;
  stratum?: string;
  weight?: number;
  run_id?: string;
  run_session?: number;
  stages: Record<string, Record<string, unknown>>;
}

type ErrorLine = Record<string, unknown> & { row: number; key: unknown };

export interface SinkCheckOptions {
  /** NAME (default: the pipeline's name, which the caller knows). */
  readonly table: string;
  /** The key column (default reference_id). */
  readonly key?: string;
  /** The output folders whose union the tables should hold (several workers, one table). */
  readonly dirs: readonly string[];
  /** Also compare NAME_transactions with transactions.csv. */
  readonly transactions?: boolean;
  /**
   * The tables hold part of the folders (a run killed mid-way): what they hold must equal its lines, but
   * lines may be missing from them.
   */
  readonly partial?: boolean;
  /** Fields (`stage.field`) that must each have a column, values or not: those the pipeline declares. */
  readonly declared?: readonly string[];
}

const MAX_PROBLEMS = 25;

/** The whole lines of a journal: a run killed mid-write may leave a torn last line (the next session cuts it). */
function ndjson<T>(path: string): T[] {
  // Plain, or gzip'ed once its run finished.
  const text = journalText(path);
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

export function resultLines(dirs: readonly string[]): ResultLine[] {
  return dirs.flatMap((d) => ndjson<ResultLine>(join(d, 'results.ndjson')));
}

function errorLines(dirs: readonly string[]): ErrorLine[] {
  return dirs.flatMap((d) => ndjson<ErrorLine>(join(d, 'errors.ndjson')));
}

function kindOf(value: unknown): Kind | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int64' : 'double';
  if (typeof value === 'object') return 'json';
  return 'string';
}

function wider(a: Kind | undefined, b: Kind): Kind {
  if (a === undefined || a === b) return b;
  if ((a === 'int64' && b === 'double') || (a === 'double' && b === 'int64')) return 'double';
  return 'string';
}

/** The SQL type (information_schema's, lower case) a column of a kind has (MariaDB's JSON: see readTable). */
const SQL_TYPES: Record<DialectName, Record<Kind, string>> = {
  postgres: { boolean: 'boolean', int64: 'bigint', double: 'double precision', string: 'text', json: 'jsonb' },
  mysql: { boolean: 'tinyint(1)', int64: 'bigint(20)', double: 'double', string: 'longtext', json: 'json' },
};

/** The key column of a table the sink makes (a primary key on MySQL cannot be TEXT). */
const KEY_TYPE: Record<DialectName, string> = { postgres: 'text', mysql: 'varchar(255)' };
const TIMESTAMP_TYPE: Record<DialectName, string> = { postgres: 'timestamp with time zone', mysql: 'datetime(3)' };

/** What the project's session reads back for a value written into a column of a kind. */
function cellMatches(kind: Kind, want: unknown, got: unknown, dialect: DialectName): boolean {
  if (want === null || want === undefined) return got === null;
  switch (kind) {
    case 'boolean':
      return dialect === 'postgres' ? got === want : got === (want ? 1 : 0);
    case 'int64':
      // Exact text: a bigint is never read through a float.
      return got === String(want);
    case 'double':
      return got === want;
    case 'string':
      if (typeof want === 'string') return got === want;
      if (typeof got !== 'string') return false;
      // A mixed column holds a non-text value as its JSON (a column widened from jsonb spells it its own way).
      return got === JSON.stringify(want) || (typeof want === 'object' && isDeepStrictEqual(safeParse(got), want));
    case 'json':
      return isDeepStrictEqual(typeof got === 'string' ? safeParse(got) : got, want);
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return Symbol('not JSON');
  }
}

function show(v: unknown): string {
  return typeof v === 'string'
    ? `'${v.length > 80 ? `${v.slice(0, 80)}...` : v}'`
    : (JSON.stringify(v) ?? String(v)).slice(0, 120);
}

export interface TableRead {
  readonly rows: Record<string, unknown>[];
  /** Column name -> SQL type (PostgreSQL: data_type; MySQL: column_type, `json` for MariaDB's checked LONGTEXT), lower case. */
  readonly types: Map<string, string>;
  /** Column name -> its comment (the field a result column holds), for the columns that have one. */
  readonly comments: Map<string, string>;
}

async function withSession<T>(url: string, work: (s: DbSession, dialect: DialectName) => Promise<T>): Promise<T> {
  const parsed = parseDbUrl(url, { flag: 'test' });
  const session = await openSession(parsed);
  try {
    return await work(session, parsed.dialect);
  } finally {
    await session.close();
  }
}

function quote(dialect: DialectName, id: string): string {
  return dialect === 'postgres' ? `"${id.replace(/"/g, '""')}"` : `\`${id.replace(/`/g, '``')}\``;
}

/** Every row of a table and its columns' types; no rows and no columns when it does not exist. */
export async function readTable(url: string, table: string): Promise<TableRead> {
  return withSession(url, async (s, dialect) => {
    const cols =
      dialect === 'postgres'
        ? await s.query<{ name: string; type: string; comment: string | null }>(
            `SELECT column_name AS name, data_type AS type, col_description(to_regclass(quote_ident($1)), ordinal_position::int) AS comment
             FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
            [table],
          )
        : await s.query<{ name: string; type: string; comment: string | null }>(
            "SELECT column_name AS name, column_type AS type, NULLIF(column_comment, '') AS comment FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?",
            [table],
          );
    const types = new Map(cols.rows.map((c) => [c.name, String(c.type).toLowerCase()]));
    const comments = new Map(cols.rows.filter((c) => c.comment).map((c) => [c.name, String(c.comment)]));
    if (types.size === 0) return { rows: [], types, comments };
    if (dialect === 'mysql') {
      // MariaDB's JSON is LONGTEXT with a json_valid check: told apart from text by that check.
      const checks = await s
        .query<{ clause: string }>(
          'SELECT check_clause AS clause FROM information_schema.check_constraints WHERE constraint_schema = DATABASE() AND table_name = ?',
          [table],
        )
        .catch(() => ({ rows: [] }));
      for (const { clause } of checks.rows) {
        const m = /^json_valid\(`((?:[^`]|``)+)`\)$/.exec(String(clause));
        if (m && types.get(m[1].replace(/``/g, '`')) === 'longtext') types.set(m[1].replace(/``/g, '`'), 'json');
      }
    }
    const rows = (await s.query<Record<string, unknown>>(`SELECT * FROM ${quote(dialect, table)}`)).rows;
    return { rows, types, comments };
  });
}

/** The names of the tables of the database at `url` (the current schema on PostgreSQL). */
export async function tableNames(url: string): Promise<string[]> {
  return withSession(url, async (s, dialect) => {
    const r =
      dialect === 'postgres'
        ? await s.query<{ name: string }>(
            'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()',
          )
        : await s.query<{ name: string }>(
            'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()',
          );
    return r.rows.map((x) => x.name).sort();
  });
}

function dialectOfUrl(url: string): DialectName {
  return parseDbUrl(url, { flag: 'test' }).dialect;
}

/** NAME against the folders' results.ndjson: every key once, nothing else, each value as its field's. */
async function resultsProblems(url: string, o: SinkCheckOptions): Promise<string[]> {
  const dialect = dialectOfUrl(url);
  const key = o.key ?? 'reference_id';
  const maxId = dialect === 'postgres' ? 63 : 64;
  const problems: string[] = [];
  const t = await readTable(url, o.table);
  if (t.types.size === 0) return o.partial ? [] : [`no table ${o.table}`];
  const inTable = new Set(t.rows.map((r) => String(r[key])));
  const lines = resultLines(o.dirs).filter((l) => !o.partial || inTable.has(String(l.key)));
  const want = new Map<string, ResultLine>();
  for (const l of lines) {
    if (l.key === null) continue;
    if (want.has(l.key))
      problems.push(`key ${l.key} is in results.ndjson twice (rows ${want.get(l.key)!.row} and ${l.row})`);
    want.set(l.key, l);
  }
  // Each result field's column (the one whose comment names it) and the kind of every value it held.
  const byField = new Map([...t.comments].map(([col, header]) => [header, col]));
  const fields = new Map<string, { header: string; kind: Kind }>();
  const unplaced = new Set<string>();
  for (const l of lines) {
    for (const [stage, values] of Object.entries(l.stages)) {
      for (const [field, v] of Object.entries(values ?? {})) {
        const k = kindOf(v);
        if (k === undefined) continue;
        const header = `${stage}.${field}`;
        const col = byField.get(header);
        if (col === undefined) unplaced.add(header);
        else fields.set(col, { header, kind: wider(fields.get(col)?.kind, k) });
      }
    }
  }
  for (const c of t.types.keys()) if (c.length > maxId) problems.push(`column ${c} is longer than ${maxId}`);
  const sampled = lines.some((l) => l.stratum !== undefined);
  const fixed = [key, 'row', ...(sampled ? ['stratum', 'weight'] : []), 'run_id', 'run_session', 'result', 'loaded_at'];
  const fixedKinds: Record<string, string> = {
    [key]: KEY_TYPE[dialect],
    row: SQL_TYPES[dialect].int64,
    run_id: SQL_TYPES[dialect].string,
    run_session: SQL_TYPES[dialect].int64,
    stratum: SQL_TYPES[dialect].string,
    weight: SQL_TYPES[dialect].double,
    result: SQL_TYPES[dialect].json,
    loaded_at: TIMESTAMP_TYPE[dialect],
  };
  for (const c of fixed) {
    if (!t.types.has(c)) problems.push(`${o.table} has no column ${c}`);
    else if (t.types.get(c) !== fixedKinds[c])
      problems.push(`${o.table}.${c} is ${t.types.get(c)}, expected ${fixedKinds[c]}`);
  }
  // Every column of a field names it (declared ones too, null in every row); none is left without.
  const nameless = [...t.types.keys()].filter((c) => !fixed.includes(c) && !t.comments.has(c));
  if (nameless.length > 0) problems.push(`${o.table} has columns no comment names a field of: ${nameless.join(', ')}`);
  if (unplaced.size > 0) problems.push(`${o.table} lacks columns for result fields: ${[...unplaced].join(', ')}`);
  const undeclared = (o.declared ?? []).filter((h) => !byField.has(h));
  if (undeclared.length > 0) problems.push(`${o.table} lacks columns for declared fields: ${undeclared.join(', ')}`);
  const suffixed = [...byField].filter(([h, c]) => /_[0-9a-f]{8}$/.test(c) && !/_[0-9a-f]{8}$/.test(h));
  if (suffixed.length > 0) problems.push(`${o.table} has hashed columns: ${suffixed.map(([, c]) => c).join(', ')}`);
  for (const [col, f] of fields) {
    const type = t.types.get(col)!;
    if (type === SQL_TYPES[dialect][f.kind]) continue;
    // Declared wider than this night's values, or widened for a batch whose transaction a kill cut short: never narrower.
    const actual = (Object.keys(SQL_TYPES[dialect]) as Kind[]).find((k) => SQL_TYPES[dialect][k] === type);
    if (actual !== undefined && wider(f.kind, actual) === actual) fields.set(col, { ...f, kind: actual });
    else problems.push(`column ${col} is ${type}, expected ${SQL_TYPES[dialect][f.kind]} (its values are ${f.kind})`);
  }
  const seen = new Set<string>();
  for (const r of t.rows) {
    const k = String(r[key]);
    if (seen.has(k)) problems.push(`key ${k} twice in ${o.table}`);
    seen.add(k);
    const l = want.get(k);
    if (!l) {
      problems.push(`key ${k} (row ${String(r.row)}) is in ${o.table} but not in results.ndjson`);
      continue;
    }
    if (r.row !== String(l.row)) problems.push(`key ${k}: row ${show(r.row)}, expected '${l.row}'`);
    if (sampled) {
      if (r.stratum !== (l.stratum ?? null))
        problems.push(`key ${k}: stratum ${show(r.stratum)}, expected ${show(l.stratum)}`);
      if (r.weight !== (l.weight ?? null))
        problems.push(`key ${k}: weight ${show(r.weight)}, expected ${show(l.weight)}`);
    }
    // The run and session that wrote the line (null for an older bre-batch's line).
    if ((r.run_id ?? null) !== (l.run_id ?? null))
      problems.push(`key ${k}: run_id ${show(r.run_id)}, expected ${show(l.run_id)}`);
    if ((r.run_session ?? null) !== (l.run_session === undefined ? null : String(l.run_session)))
      problems.push(`key ${k}: run_session ${show(r.run_session)}, expected ${show(l.run_session)}`);
    const result = typeof r.result === 'string' ? safeParse(r.result) : r.result;
    if (!isDeepStrictEqual(result, l.stages))
      problems.push(`key ${k}: result ${show(result)} is not the line's stages ${show(l.stages)}`);
    if (r.loaded_at === null || r.loaded_at === undefined) problems.push(`key ${k}: no loaded_at`);
    for (const [col, f] of fields) {
      const dot = f.header.indexOf('.');
      const v = l.stages[f.header.slice(0, dot)]?.[f.header.slice(dot + 1)];
      if (!cellMatches(f.kind, v, r[col], dialect))
        problems.push(`key ${k}: ${col} (${f.kind}) is ${show(r[col])} (${typeof r[col]}), expected ${show(v)}`);
    }
  }
  for (const k of want.keys())
    if (!seen.has(k)) problems.push(`key ${k} (row ${want.get(k)!.row}) is in results.ndjson but not in ${o.table}`);
  return cap(problems);
}

const ERROR_KINDS: readonly [string, Kind][] = [
  ['row', 'int64'],
  ['line', 'int64'],
  ['stage', 'string'],
  ['status', 'int64'],
  ['code', 'string'],
  ['message', 'string'],
  ['field', 'string'],
  ['expected', 'string'],
  ['errors', 'json'],
  ['attempts', 'int64'],
  ['input', 'json'],
  ['run_id', 'string'],
  ['run_session', 'int64'],
];

/** NAME_errors against the folders' errors.ndjson: one row per error line's row, every field as in the line. */
async function errorsProblems(url: string, o: SinkCheckOptions): Promise<string[]> {
  const dialect = dialectOfUrl(url);
  const key = o.key ?? 'reference_id';
  const table = `${o.table}_errors`;
  const problems: string[] = [];
  const t = await readTable(url, table);
  const inTable = new Set(t.rows.map((r) => String(r.row)));
  const want = new Map<string, ErrorLine>();
  for (const e of errorLines(o.dirs)) {
    if (o.partial && !inTable.has(String(e.row))) continue;
    if (want.has(String(e.row))) problems.push(`row ${e.row} is in errors.ndjson twice`);
    want.set(String(e.row), e);
  }
  if (t.types.size === 0) return want.size === 0 || o.partial ? [] : [`no table ${table}`];
  const sampled = [...want.values()].some((e) => e.stratum !== undefined);
  const kinds: [string, Kind][] = [
    [key, 'string'],
    ...ERROR_KINDS,
    ...(sampled
      ? ([
          ['stratum', 'string'],
          ['weight', 'double'],
        ] as [string, Kind][])
      : []),
  ];
  for (const [c, kind] of kinds) {
    const want = SQL_TYPES[dialect][kind];
    if (!t.types.has(c)) problems.push(`${table} has no column ${c}`);
    else if (t.types.get(c) !== want) problems.push(`${table}.${c} is ${t.types.get(c)}, expected ${want}`);
  }
  const seen = new Set<string>();
  for (const r of t.rows) {
    const row = String(r.row);
    seen.add(row);
    const e = want.get(row);
    if (!e) {
      problems.push(`row ${row} (${show(r[key])}, ${show(r.code)}) is in ${table} but not in errors.ndjson`);
      continue;
    }
    for (const [c, kind] of kinds) {
      if (!t.types.has(c)) continue;
      const v = c === key ? e.key : e[c];
      if (!cellMatches(kind, v, r[c], dialect))
        problems.push(`row ${row}: ${c} is ${show(r[c])} (${typeof r[c]}), expected ${show(v)}`);
    }
    const unknown = Object.keys(e).filter((f) => f !== 'key' && !kinds.some(([c]) => c === f));
    if (unknown.length > 0) problems.push(`row ${row}: errors.ndjson fields without a column: ${unknown.join(', ')}`);
  }
  for (const [row, e] of want)
    if (!seen.has(row))
      problems.push(`row ${row} (${show(e.key)}, ${show(e.code)}) is in errors.ndjson but not in ${table}`);
  return cap(problems);
}

/** NAME_transactions against the folders' transactions.csv: per key, the same transactions in the same order. */
async function transactionsProblems(url: string, o: SinkCheckOptions): Promise<string[]> {
  const key = o.key ?? 'reference_id';
  const table = `${o.table}_transactions`;
  const problems: string[] = [];
  const want = new Map<string, Record<string, string>[]>();
  for (const d of o.dirs) {
    const records = parse(readFileSync(join(d, 'transactions.csv'), 'utf8'), {
      columns: true,
      skip_empty_lines: true,
    }) as Record<string, string>[];
    for (const r of records) {
      if (!want.has(r.key)) want.set(r.key, []);
      want.get(r.key)!.push(r);
    }
  }
  const t = await readTable(url, table);
  if (t.types.size === 0) return [`no table ${table}`];
  const got = new Map<string, Record<string, unknown>[]>();
  for (const r of t.rows) {
    const k = String(r[key]);
    if (!got.has(k)) got.set(k, []);
    got.get(k)!.push(r);
  }
  for (const list of got.values()) list.sort((a, b) => Number(a.seq) - Number(b.seq));
  const keys = new Set([...want.keys(), ...got.keys()]);
  for (const k of keys) {
    const w = want.get(k) ?? [];
    const g = got.get(k) ?? [];
    if (w.length !== g.length) {
      problems.push(`key ${k}: ${g.length} transactions in ${table}, ${w.length} in transactions.csv`);
      continue;
    }
    w.forEach((csv, i) => {
      const row = g[i];
      const where = `key ${k} transaction ${i}`;
      if (String(row.seq) !== String(i)) problems.push(`${where}: seq ${show(row.seq)}`);
      for (const c of ['source', 'account', 'txn_id', 'type', 'mode', 'narration', 'value_date']) {
        if ((row[c] ?? '') !== csv[c]) problems.push(`${where}: ${c} is ${show(row[c])}, expected ${show(csv[c])}`);
      }
      for (const c of ['amount', 'balance']) {
        const v = csv[c] === '' ? null : Number(csv[c]);
        if (row[c] !== v) problems.push(`${where}: ${c} is ${show(row[c])}, expected ${show(v)}`);
      }
      // The wall clock in `timestamp`, its offset beside it: together the instant transactions.csv names.
      const ts = csv.timestamp;
      if (ts === '') {
        if (row.timestamp !== null) problems.push(`${where}: timestamp ${show(row.timestamp)}, expected none`);
      } else {
        const offset = /(Z|[+-]\d{2}:\d{2})$/.exec(ts)?.[1];
        const wantOffset = offset === 'Z' ? '+00:00' : offset;
        if (row.timestamp_offset !== (wantOffset ?? null))
          problems.push(`${where}: timestamp_offset ${show(row.timestamp_offset)}, expected ${show(wantOffset)}`);
        const local = String(row.timestamp).replace(' ', 'T');
        const instant = Date.parse(`${local}${wantOffset ?? 'Z'}`);
        if (instant !== Date.parse(offset ? ts : `${ts}Z`))
          problems.push(`${where}: timestamp ${show(row.timestamp)} ${show(row.timestamp_offset)} is not ${ts}`);
      }
    });
  }
  return cap(problems);
}

/** All of it: NAME, NAME_errors and (for an account pipeline) NAME_transactions against the folders. */
export async function sinkProblems(url: string, o: SinkCheckOptions): Promise<string[]> {
  return [
    ...(await resultsProblems(url, o)),
    ...(await errorsProblems(url, o)),
    ...(o.transactions ? await transactionsProblems(url, o) : []),
  ];
}

function cap(problems: string[]): string[] {
  return problems.length <= MAX_PROBLEMS
    ? problems
    : [...problems.slice(0, MAX_PROBLEMS), `... and ${problems.length - MAX_PROBLEMS} more`];
}

/** The lines of stderr that are JSON log lines (--log-format json). */
export function logLines(stderr: string): { level?: string; code?: string; message?: string }[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as { level?: string; code?: string; message?: string };
      } catch {
        return {};
      }
    });
}

/** The code of the error the CLI ended with (--log-format json), if any. */
export function exitErrorCode(stderr: string): string | undefined {
  return logLines(stderr)
    .filter((l) => l.level === 'error' && l.code !== undefined)
    .at(-1)?.code;
}
