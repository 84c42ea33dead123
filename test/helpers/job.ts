/**
 * What the job tests (test/e2e/job.test.ts, test/e2e/job-files.test.ts) read back: the one scratch folder a
 * worker made under its --out, its journal's lines (all, or those before the commit table's mark: what it
 * committed), the sink table's keys with the answer each holds, `job status --json`, a worker holding a chunk,
 * and the flags every worker of a test job is started with (short leases, so that a takeover happens within a
 * test). Statements are written once with `$n` placeholders, bound for the sink's dialect (`jobQuery`).
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { spawnCli, type CliResult, type RunningCli } from './cli.js';
import { journalExists, journalText } from './output.js';
import { type DbSession, type DialectName, dialectOf, openSession, parseDbUrl } from '../../src/db/index.js';
import { freshDatabase } from './db.js';
import { loadRows } from './db-load.js';
import { startTestSandbox, type TestSandbox } from './sandbox.js';
import { locationRows } from './sink-inputs.js';
import { query, quote } from './sink.js';
import { waitFor } from './wait.js';

export interface JournalLine {
  readonly row: number;
  readonly line?: number;
  readonly key: string;
  readonly stages?: Record<string, Record<string, unknown>>;
}

/** A failed run, for an assertion's message: its exit and the end of its stderr. */
export const why = (r: CliResult): string => `exit ${r.code} ${r.signal ?? ''}\n${r.stderr.slice(-3000)}`;

/** The one folder a worker wrote under its --out (a job's worker makes a new one per session). */
export function folderOf(base: string): string {
  const dirs = existsSync(base) ? readdirSync(base) : [];
  if (dirs.length !== 1) throw new Error(`expected one folder under ${base}, got ${dirs.join(', ')}`);
  return join(base, dirs[0]);
}

/** The one folder a worker makes under its --out, once it is there (the base is made a moment before it). */
export async function waitForFolder(base: string, who: string): Promise<string> {
  await waitFor(() => existsSync(base) && readdirSync(base).length === 1, 60_000, `the folder of ${who}`);
  return folderOf(base);
}

/** A journal's lines (results.ndjson, errors.ndjson), only those within its first `bytes` when given. */
export function journal(path: string, bytes = Infinity): JournalLine[] {
  if (!journalExists(path)) return [];
  // A worker's finished folder has its journal gzip'ed: positions count its plain bytes.
  const text = Buffer.from(journalText(path))
    .subarray(0, Number.isFinite(bytes) ? bytes : undefined)
    .toString('utf8');
  // A running worker may be in the middle of a write: its lines are the whole ones, up to the last newline.
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as JournalLine);
}

/** The location stage's request id: which call's answer a line or a sink row holds. */
export const requestId = (stages: unknown): string =>
  String((stages as Record<string, Record<string, unknown>>).location.request_id);

/**
 * One session a database for `jobQuery`, kept for the file: the tests poll the job's tables every 25 ms, and a
 * session opened for each look costs 2-2.5 ms of this process's CPU (and, on PostgreSQL, a server process). Each
 * statement commits on its own, so each look sees what the workers committed. A session lost, or one whose
 * statement failed, is closed and the next look opens another.
 */
const sessions = new Map<string, Promise<DbSession>>();

function sessionOf(url: string): Promise<DbSession> {
  let s = sessions.get(url);
  if (!s) {
    s = openSession(parseDbUrl(url, { flag: 'test' }));
    sessions.set(url, s);
    const opened = s;
    opened.then(
      (session) => void session.lost.then(() => forget(url, opened)),
      () => forget(url, opened),
    );
  }
  return s;
}

function forget(url: string, s: Promise<DbSession>): void {
  if (sessions.get(url) !== s) return;
  sessions.delete(url);
  void s.then((session) => session.close()).catch(() => undefined);
}

// Before the databases are dropped (./db.ts's afterAll, registered before this one, runs after it).
afterAll(async () => {
  const open = [...sessions.values()];
  sessions.clear();
  for (const s of open) await s.then((session) => session.close()).catch(() => undefined);
});

/** Rows of a statement written with `$n` placeholders, on the database at `url` (PostgreSQL or MySQL/MariaDB). */
export async function jobQuery<R = Record<string, unknown>>(
  url: string,
  sql: string,
  params: readonly unknown[] = [],
): Promise<R[]> {
  const b = dialectOf(parseDbUrl(url, { flag: 'test' })).job.bind(sql, params);
  const s = sessionOf(url);
  try {
    return (await (await s).query<R>(b.sql, b.params)).rows;
  } catch (err) {
    forget(url, s);
    throw err;
  }
}

/** The sink table's keys, each with the request id of the answer it holds; a key held twice throws. */
export async function sinkKeys(sink: string, table: string): Promise<Map<string, string>> {
  const rows = await query<{ reference_id: string; result: unknown }>(
    sink,
    `SELECT reference_id, result FROM ${quote(sink, table)}`,
  );
  const out = new Map<string, string>();
  for (const r of rows) {
    if (out.has(r.reference_id)) throw new Error(`${table} holds ${r.reference_id} twice`);
    out.set(r.reference_id, requestId(typeof r.result === 'string' ? JSON.parse(r.result) : r.result));
  }
  return out;
}

/** The results a folder committed: its journal's lines before the commit table's position. */
export async function committedLines(sink: string, folder: string): Promise<JournalLine[]> {
  const mark = await jobQuery<{ results_bytes: string }>(
    sink,
    'SELECT results_bytes FROM bre_batch_loads WHERE path = $1',
    [realpathSync(folder)],
  );
  return journal(join(folder, 'results.ndjson'), Number(mark[0]?.results_bytes ?? 0));
}

/** `job status NAME --json`, which must exit 0. */
export async function jobStatus(sink: string, job: string): Promise<Record<string, unknown>> {
  const r = await spawnCli(['job', 'status', job, '--sink', sink, '--json']);
  expect(r.code, why(r)).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

export interface JobFlags {
  readonly sink: string;
  readonly table: string;
  readonly job: string;
  /** workflow calls a second. */
  readonly rate: number;
  readonly chunkRows?: number;
  /** --local-address; none: the default route. */
  readonly address?: string;
  /**
   * --job-lease: 2 s, so that a takeover happens within a test; longer for a case that takes nothing over, where
   * a heartbeat made late by a busy machine would lapse a lease and send rows twice.
   */
  readonly lease?: string;
}

/** A test job worker's flags: chunks of 25 rows, a lease (2 s) renewed every 500 ms, its own rate and address. */
export function jobFlags(o: JobFlags): string[] {
  return [
    '--sink',
    o.sink,
    '--sink-table',
    o.table,
    '--job',
    o.job,
    '--job-chunk-rows',
    String(o.chunkRows ?? 25),
    '--job-lease',
    o.lease ?? '2s',
    '--job-heartbeat',
    '500ms',
    '--rate',
    `workflow=${o.rate}/s`,
    '--rate-slack',
    '2s',
    ...(o.address ? ['--local-address', o.address] : []),
  ];
}

/**
 * Every key of `keys` once in the sink table and no other, each with an answer one of the workers committed
 * (a line of its journal before the commit table's mark, src/output/sink/): what exactly once means for a job.
 * Returns each folder's committed lines, in the order of `folders`.
 */
export async function expectEachKeyOnceAsCommitted(
  sink: string,
  table: string,
  folders: readonly string[],
  keys: readonly string[],
): Promise<JournalLine[][]> {
  const inSink = await sinkKeys(sink, table);
  expect([...inSink.keys()].sort()).toEqual([...keys].sort());
  const byFolder = await Promise.all(folders.map((f) => committedLines(sink, f)));
  const written = new Map<string, Set<string>>();
  for (const lines of byFolder)
    for (const l of lines) {
      if (!written.has(l.key)) written.set(l.key, new Set());
      written.get(l.key)!.add(requestId(l.stages));
    }
  expect([...written.keys()].sort(), 'the keys the workers committed').toEqual([...inSink.keys()].sort());
  for (const [key, id] of inSink)
    expect(written.get(key)?.has(id), `${key}'s row in the sink is one a worker committed`).toBe(true);
  return byFolder;
}

/** Waits until `run` holds a chunk of `job` (its worker's name holds its pid); a run that exits first fails the wait. */
export async function waitForChunkHeld(sink: string, job: string, run: RunningCli, who: string): Promise<void> {
  await waitFor(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`${who} exited before it held a chunk:\n${run.stderr()}`);
      const held = await jobQuery(sink, 'SELECT 1 FROM bre_batch_chunks WHERE job = $1 AND holder LIKE $2', [
        job,
        `%:${run.child.pid}:%`,
      ]);
      return held.length > 0;
    },
    60_000,
    `${who} holding a chunk`,
  );
}

/** What a job file's cases run against on one database (made by `jobSetting`). */
export interface JobSetting {
  readonly sb: TestSandbox;
  /** A fresh database whose table `apps` holds the file's location rows. */
  readonly source: string;
  /** A fresh database for the job's tables and the sink's. */
  readonly sink: string;
}

/**
 * Before the file's cases on `dialect`: a sandbox with no limit, a fresh source of `rows` location rows and a fresh
 * sink (databases named `bre_e2e_<name>_src` and `_dst`); the sandbox closed after them. Read its fields inside a
 * case (they are set when the cases run).
 */
export function jobSetting(dialect: DialectName, name: string, rows: number): JobSetting {
  const s = {} as { sb: TestSandbox; source: string; sink: string };
  beforeAll(async () => {
    s.sb = await startTestSandbox({ rate: { workflow: null } });
    s.source = await freshDatabase(dialect, `bre_e2e_${name}_src`);
    s.sink = await freshDatabase(dialect, `bre_e2e_${name}_dst`);
    await loadRows(s.source, 'apps', locationRows(rows));
  });
  afterAll(async () => {
    await s.sb?.close();
  });
  return s;
}
