/**
 * A database as the input (issue 23): `run location --rate off` over the same rows from a PostgreSQL table
 * (`--input postgres://... --table`) and from a CSV file, against a sandbox in another process (so the
 * runner is measured alone). Figures:
 * - rows a second, whole process (start to exit, as a user waits) and while rows flow (summary.json's
 *   rows_per_second), 1M rows from the table against the same 1M from the CSV: the table at least 80%. These
 *   machines are shared and their load drifts over the minutes a run takes, so the two runs are taken in
 *   turn, `rounds` times, the order swapped each round, and the ratio is the median of the rounds';
 * - peak RSS of the table run at 1M rows (the highest of the rounds) over 100k: at most 1.25x (the reader
 *   holds a page or two);
 * - the source alone (no pipeline: DbSource read in this process) at several page sizes, rows a second,
 *   which is how the default page size (DEFAULT_PAGE_ROWS) was chosen;
 * - the same table read from MariaDB (informative), when its server answers.
 *
 * The table is made by the database itself (generate_series; MariaDB's seq_1_to_N), the same values as
 * writeLocationCsv's, keyed by reference_id (a primary key). Needs the local servers of the tests
 * (BRE_TEST_PG_URL / BRE_TEST_MYSQL_URL override them); its databases are dropped at the end.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openSession, parseDbUrl, type DbUrl, type DialectName } from '../src/db/index.js';
import { DbSource } from '../src/input/db/index.js';
import { readRunSummary } from '@bre-batch/formats';
import { CLI, CLIENT_ID, ratio, startSandboxProcess, TOKEN, writeLocationCsv } from './harness.js';

/** The benchmark's database servers, an admin URL each (the tests' own variables). */
export const ADMIN: Readonly<Record<DialectName, string>> = {
  postgres: process.env.BRE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  mysql: process.env.BRE_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/mysql',
};

interface SourceRun {
  readonly input: string;
  readonly rows: number;
  readonly exit: number | null;
  readonly seconds: number;
  /** Rows over the whole process time (start-up, the header check, the end files included). */
  readonly rowsPerSecond: number;
  /** summary.json's: first row dispatched to last settled. */
  readonly flowRowsPerSecond: number | null;
  readonly peakRssMb: number | null;
  readonly succeeded: number | null;
}

interface SourceRound {
  readonly csv: SourceRun;
  readonly postgres: SourceRun;
  /** The table run's rows/s over the CSV run's: whole process, and while rows flow. */
  readonly ratio: number;
  readonly flowRatio: number | null;
}

export interface SourceBenchResult {
  /** The table run of the small size (the RSS baseline). */
  readonly small: SourceRun;
  readonly rounds: readonly SourceRound[];
  /** The median of the rounds' ratios (whole process; while rows flow). */
  readonly ratioToCsv: number;
  readonly flowRatioToCsv: number | null;
  /** Peak RSS of the large table runs (the highest) over the small one. */
  readonly rssRatio: number | null;
  readonly largePeakRssMb: number | null;
  readonly readOnly: readonly { readonly pageRows: number; readonly rowsPerSecond: number }[];
  readonly mysql?: SourceRun | { readonly error: string };
}

function hwmKb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function runOnce(
  label: string,
  rows: number,
  input: readonly string[],
  out: string,
  sandboxUrl: string,
): Promise<SourceRun> {
  rmSync(out, { recursive: true, force: true });
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [CLI, 'run', 'location', ...input, '--out', out, '--rate', 'off', '--no-progress'],
    {
      env: {
        ...process.env,
        BRE_BASE_URL: sandboxUrl,
        BUREAU_BASE_URL: sandboxUrl,
        ACCOUNT_BASE_URL: sandboxUrl,
        BRE_CLIENT_ID: CLIENT_ID,
        BRE_AUTH_TOKEN: TOKEN,
        BRE_REPORT_RSS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  let peak = 0;
  const poll = setInterval(() => {
    if (child.pid) peak = Math.max(peak, hwmKb(child.pid));
  }, 100);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(poll);
  const seconds = (performance.now() - t0) / 1000;
  const reported = /maxRSS (\d+) kB/.exec(stderr);
  const peakKb = reported ? Number(reported[1]) : peak || null;
  const read = readRunSummary(out);
  const summary = read.state === 'ok' ? read.value : undefined;
  if (code !== 0) process.stderr.write(`bench source: ${label} exited ${code}: ${stderr.slice(-2000)}\n`);
  rmSync(out, { recursive: true, force: true });
  return {
    input: label,
    rows,
    exit: code,
    seconds: Math.round(seconds * 10) / 10,
    rowsPerSecond: Math.round(rows / seconds),
    flowRowsPerSecond:
      summary?.rows_per_second === null || summary === undefined ? null : Math.round(summary.rows_per_second),
    peakRssMb: peakKb === null ? null : Math.round(peakKb / 1024),
    succeeded: summary?.rows.succeeded ?? null,
  };
}

/** A fresh database on the dialect's server with `rows` location rows in `loc`; its URL. */
async function makeTable(dialect: DialectName, name: string, rows: number): Promise<string> {
  const admin = await openSession(parseDbUrl(ADMIN[dialect], { flag: 'bench' }));
  const q = dialect === 'postgres' ? `"${name}"` : `\`${name}\``;
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${q}`);
    await admin.query(`CREATE DATABASE ${q}`);
  } finally {
    await admin.close();
  }
  const u = new URL(ADMIN[dialect]);
  u.pathname = `/${name}`;
  const db = await openSession(parseDbUrl(u.href, { flag: 'bench' }));
  try {
    // The values of writeLocationCsv: B-i, ui, li, and the same latitude and longitude.
    if (dialect === 'postgres') {
      await db.query(
        'CREATE TABLE loc (reference_id text PRIMARY KEY, user_id text, lead_id text, latitude numeric(8,4), longitude numeric(8,4))',
      );
      await db.query(
        `INSERT INTO loc SELECT 'B-' || i, 'u' || i, 'l' || i, 8 + ((i * 7919::bigint) % 2700) / 100.0, 69 + ((i * 104729::bigint) % 2000) / 100.0 FROM generate_series(1, ${rows}) AS i`,
      );
      await db.query('ANALYZE loc');
    } else {
      await db.query(
        'CREATE TABLE loc (reference_id varchar(32) PRIMARY KEY, user_id varchar(32), lead_id varchar(32), latitude decimal(8,4), longitude decimal(8,4))',
      );
      await db.query(
        `INSERT INTO loc SELECT CONCAT('B-', seq), CONCAT('u', seq), CONCAT('l', seq), 8 + ((seq * 7919) % 2700) / 100, 69 + ((seq * 104729) % 2000) / 100 FROM seq_1_to_${rows}`,
      );
    }
  } finally {
    await db.close();
  }
  return u.href;
}

async function dropDatabase(dialect: DialectName, name: string): Promise<void> {
  const admin = await openSession(parseDbUrl(ADMIN[dialect], { flag: 'bench' }));
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${dialect === 'postgres' ? `"${name}"` : `\`${name}\``}`);
  } finally {
    await admin.close();
  }
}

/** The source alone: every row of `loc` read through DbSource, rows a second. */
async function readOnly(url: DbUrl, pageRows: number): Promise<number> {
  const src = await DbSource.open({ url, relation: { kind: 'table', name: 'loc' }, key: 'reference_id', pageRows });
  const t0 = performance.now();
  let n = 0;
  try {
    for await (const batch of src.rows()) n += batch.length;
  } finally {
    await src.close();
  }
  return Math.round(n / ((performance.now() - t0) / 1000));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function benchSource(opts: {
  dir: string;
  rows: readonly [number, number];
  rounds?: number;
  pageSizes?: readonly number[];
  mysql?: boolean;
}): Promise<SourceBenchResult> {
  const [small, large] = opts.rows;
  const name = (n: number, d: string) => `bre_bench_src_${d}_${n}_${process.pid}`;
  const sandbox = await startSandboxProcess();
  const made: [DialectName, string][] = [];
  try {
    const csvPath = join(opts.dir, `source-${large}.csv`);
    await writeLocationCsv(csvPath, large);
    const urls = new Map<number, string>();
    for (const n of [small, large]) {
      made.push(['postgres', name(n, 'pg')]);
      urls.set(n, await makeTable('postgres', name(n, 'pg'), n));
    }
    const smallRun = await runOnce(
      `postgres table, ${small} rows`,
      small,
      ['--input', urls.get(small)!, '--table', 'loc'],
      join(opts.dir, 'src-pg-small'),
      sandbox.url,
    );
    const rounds: SourceRound[] = [];
    for (let r = 0; r < (opts.rounds ?? 2); r += 1) {
      const table = () =>
        runOnce(
          `postgres table, ${large} rows`,
          large,
          ['--input', urls.get(large)!, '--table', 'loc'],
          join(opts.dir, 'src-pg-large'),
          sandbox.url,
        );
      const file = () =>
        runOnce(`csv, ${large} rows`, large, ['--input', csvPath], join(opts.dir, 'src-csv'), sandbox.url);
      // The order swapped each round: neither input always gets the quieter minutes.
      let postgres: SourceRun;
      let csv: SourceRun;
      if (r % 2 === 0) {
        postgres = await table();
        csv = await file();
      } else {
        csv = await file();
        postgres = await table();
      }
      rounds.push({
        csv,
        postgres,
        ratio: ratio(postgres.rowsPerSecond, csv.rowsPerSecond),
        flowRatio:
          postgres.flowRowsPerSecond && csv.flowRowsPerSecond
            ? ratio(postgres.flowRowsPerSecond, csv.flowRowsPerSecond)
            : null,
      });
    }
    rmSync(csvPath, { force: true });
    const largeUrl = parseDbUrl(urls.get(large)!, { flag: 'bench' });
    const readOnlyRuns = [];
    for (const pageRows of opts.pageSizes ?? [500, 2000, 10_000])
      readOnlyRuns.push({ pageRows, rowsPerSecond: await readOnly(largeUrl, pageRows) });
    let mysql: SourceRun | { error: string } | undefined;
    if (opts.mysql !== false) {
      try {
        made.push(['mysql', name(large, 'my')]);
        const myUrl = await makeTable('mysql', name(large, 'my'), large);
        mysql = await runOnce(
          `mariadb table, ${large} rows`,
          large,
          ['--input', myUrl, '--table', 'loc'],
          join(opts.dir, 'src-my-large'),
          sandbox.url,
        );
      } catch (err) {
        mysql = { error: (err as Error).message };
      }
    }
    const flows = rounds.map((r) => r.flowRatio).filter((x): x is number => x !== null);
    const peaks = rounds.map((r) => r.postgres.peakRssMb).filter((x): x is number => x !== null);
    const largePeak = peaks.length > 0 ? Math.max(...peaks) : null;
    return {
      small: smallRun,
      rounds,
      ratioToCsv: ratio(median(rounds.map((r) => r.ratio)), 1),
      flowRatioToCsv: flows.length > 0 ? ratio(median(flows), 1) : null,
      rssRatio: smallRun.peakRssMb && largePeak ? ratio(largePeak, smallRun.peakRssMb) : null,
      largePeakRssMb: largePeak,
      readOnly: readOnlyRuns,
      ...(mysql ? { mysql } : {}),
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    for (const [d, n] of made) await dropDatabase(d, n).catch(() => undefined);
  }
}
