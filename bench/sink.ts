/**
 * The database sink (issue 23's two targets), against the local PostgreSQL:
 * - `load`: rows a second that `bre-batch load OUT --sink postgres://...` writes from an output folder of
 *   `loadRows` rows (1M), whole process as a user waits (start-up, the tables made, the last commit): at least
 *   20,000. The folder is a real `run rescore` of a few hundred rows whose journal lines are replicated with
 *   new row numbers and keys (and a share of them as error lines), its manifest the run's own; each round loads
 *   it into a database of its own (empty tables: a backfill);
 * - `run`: `run location --rate off` with `--sink` against the same run without it, rows a second (whole
 *   process, and while rows flow): at least 90%. The sandbox is in another process (the runner measured
 *   alone), and the two variants are taken in turn, the order swapped each round, the median round's ratio the
 *   figure (these machines are shared and their load drifts over the minutes a run takes). The run with a sink
 *   ends once the sink has the last row (finishSink): its time includes the catching up.
 *
 * Needs the local PostgreSQL of the tests (BRE_TEST_PG_URL overrides it); its databases are dropped at the end.
 *
 *   npx tsx bench/sink.ts [load|run] [--quick]   # standalone (after npm run build): prints the JSON
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession, parseDbUrl } from '../src/db/index.js';
import { FILES, readRunSummary } from '../src/output/format/index.js';
import { CLI, CLIENT_ID, ratio, startSandboxProcess, TOKEN, writeLocationCsv, writeRescoreCsv } from './harness.js';

const ADMIN = process.env.BRE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface LoadRun {
  readonly rows: number;
  readonly errors: number;
  readonly exit: number | null;
  readonly seconds: number;
  /** Lines (results and errors) over the whole process's time. */
  readonly rowsPerSecond: number;
  /** Rows the tables hold afterwards (results, errors): all of them. */
  readonly inTables: { readonly results: number; readonly errors: number };
}

export interface SinkRunOnce {
  readonly sink: boolean;
  readonly rows: number;
  readonly exit: number | null;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  /** summary.json's: first row dispatched to last settled. */
  readonly flowRowsPerSecond: number | null;
  readonly inTable: number | null;
}

export interface SinkRound {
  readonly without: SinkRunOnce;
  readonly with: SinkRunOnce;
  readonly ratio: number;
  readonly flowRatio: number | null;
}

export interface SinkBenchResult {
  readonly load?: { readonly folderMb: number; readonly runs: readonly LoadRun[]; readonly rowsPerSecond: number };
  readonly run?: { readonly rows: number; readonly rounds: readonly SinkRound[]; readonly ratio: number; readonly flowRatio: number | null };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function urlOf(name: string): string {
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  return u.href;
}

async function admin<T>(work: (q: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  const s = await openSession(parseDbUrl(ADMIN, { flag: 'bench' }));
  try {
    return await work((sql) => s.query(sql));
  } finally {
    await s.close();
  }
}

async function freshDatabase(name: string): Promise<string> {
  await admin(async (q) => {
    await q(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await q(`CREATE DATABASE "${name}"`);
  });
  return urlOf(name);
}

async function dropDatabase(name: string): Promise<void> {
  await admin(async (q) => q(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

async function countRows(url: string, table: string): Promise<number | null> {
  const s = await openSession(parseDbUrl(url, { flag: 'bench' }));
  try {
    const r = await s.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
    return Number(r.rows[0].n);
  } catch {
    return null;
  } finally {
    await s.close();
  }
}

function envFor(sandboxUrl: string): NodeJS.ProcessEnv {
  return { ...process.env, BRE_BASE_URL: sandboxUrl, BUREAU_BASE_URL: sandboxUrl, ACCOUNT_BASE_URL: sandboxUrl, BRE_CLIENT_ID: CLIENT_ID, BRE_AUTH_TOKEN: TOKEN };
}

/** The CLI as a user runs it (the shipped build); its exit code, seconds and stderr. */
async function cli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; seconds: number; stderr: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, seconds: (performance.now() - t0) / 1000, stderr };
}

/**
 * An output folder of `rows` rows as `run rescore` writes it: a real run of `seedRows` rows, its results lines
 * replicated with new row numbers and keys, every `errorEvery`-th row an error line instead (as a failed call
 * writes it), the run's manifest. Returns the results and errors written.
 */
export async function writeLoadFolder(out: string, rows: number, sandboxUrl: string, o: { seedRows?: number; errorEvery?: number } = {}): Promise<{ results: number; errors: number; bytes: number }> {
  const seed = join(out, '..', `${out.split('/').pop()}-seed`);
  const input = writeRescoreCsv(o.seedRows ?? 240, 'SINKSEED');
  try {
    rmSync(seed, { recursive: true, force: true });
    const r = await cli(['run', 'rescore', '--input', input, '--out', seed, '--rate', 'off', '--no-progress'], envFor(sandboxUrl));
    if (r.code !== 0) throw new Error(`the seed run exited ${r.code}: ${r.stderr.slice(-2000)}`);
  } finally {
    rmSync(input, { force: true });
  }
  // Each line without its `{"row":N,"key":"K",` head: the rest is written after a new head.
  const tails = readFileSync(join(seed, FILES.results), 'utf8').split('\n').filter((l) => l !== '').map((l) => {
    const m = /^\{"row":\d+,"key":"[^"]*",/.exec(l);
    if (!m) throw new Error(`unexpected results line: ${l.slice(0, 80)}`);
    return l.slice(m[0].length);
  });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, FILES.state), { recursive: true });
  writeFileSync(join(out, FILES.manifest), readFileSync(join(seed, FILES.manifest)));
  rmSync(seed, { recursive: true, force: true });
  const errorEvery = o.errorEvery ?? 50;
  const results = createWriteStream(join(out, FILES.results), { highWaterMark: 1 << 20 });
  const errors = createWriteStream(join(out, FILES.errors), { highWaterMark: 1 << 20 });
  let nResults = 0;
  let nErrors = 0;
  let bytes = 0;
  let chunk: string[] = [];
  const flush = async () => {
    const text = chunk.join('');
    bytes += Buffer.byteLength(text);
    chunk = [];
    if (!results.write(text)) await once(results, 'drain');
  };
  for (let i = 1; i <= rows; i += 1) {
    const key = `SK-${i}`;
    if (i % errorEvery === 0) {
      nErrors += 1;
      errors.write(`${JSON.stringify({ row: i, key, line: i + 1, stage: 'decision', status: 503, code: 'SERVER_UNAVAILABLE', message: 'the server was unavailable after 5 attempts', attempts: 5, input: null })}\n`);
      continue;
    }
    nResults += 1;
    chunk.push(`{"row":${i},"key":"${key}",${tails[i % tails.length]}\n`);
    if (chunk.length >= 2000) await flush();
  }
  await flush();
  results.end();
  errors.end();
  await Promise.all([once(results, 'finish'), once(errors, 'finish')]);
  return { results: nResults, errors: nErrors, bytes };
}

/** `bre-batch load OUT --sink URL` into a database of its own; rows a second over the whole process. */
export async function loadOnce(out: string, lines: { results: number; errors: number }, dbName: string): Promise<LoadRun> {
  const url = await freshDatabase(dbName);
  try {
    const r = await cli(['load', out, '--sink', url], { ...process.env });
    if (r.code !== 0) process.stderr.write(`bench sink: load exited ${r.code}: ${r.stderr.slice(-2000)}\n`);
    const total = lines.results + lines.errors;
    return {
      rows: lines.results, errors: lines.errors, exit: r.code, seconds: Math.round(r.seconds * 10) / 10, rowsPerSecond: Math.round(total / r.seconds),
      inTables: { results: (await countRows(url, 'rescore')) ?? 0, errors: (await countRows(url, 'rescore_errors')) ?? 0 },
    };
  } finally {
    await dropDatabase(dbName).catch(() => undefined);
  }
}

async function runOnce(sink: string | undefined, input: string, rows: number, out: string, sandboxUrl: string): Promise<SinkRunOnce> {
  rmSync(out, { recursive: true, force: true });
  const r = await cli(['run', 'location', '--input', input, '--out', out, '--rate', 'off', '--no-progress', ...(sink ? ['--sink', sink] : [])], envFor(sandboxUrl));
  if (r.code !== 0) process.stderr.write(`bench sink: run ${sink ? 'with' : 'without'} --sink exited ${r.code}: ${r.stderr.slice(-2000)}\n`);
  const read = readRunSummary(out);
  const summary = read.state === 'ok' ? read.value : undefined;
  rmSync(out, { recursive: true, force: true });
  return {
    sink: sink !== undefined, rows, exit: r.code, seconds: Math.round(r.seconds * 10) / 10, rowsPerSecond: Math.round(rows / r.seconds),
    flowRowsPerSecond: summary?.rows_per_second === null || summary === undefined ? null : Math.round(summary.rows_per_second),
    inTable: sink ? await countRows(sink, 'location') : null,
  };
}

export async function benchSink(opts: { dir: string; loadRows?: number; loadRounds?: number; runRows?: number; rounds?: number; only?: readonly ('load' | 'run')[] }): Promise<SinkBenchResult> {
  const want = (p: 'load' | 'run') => !opts.only || opts.only.includes(p);
  const sandbox = await startSandboxProcess();
  const made: string[] = [];
  const result: { -readonly [K in keyof SinkBenchResult]: SinkBenchResult[K] } = {};
  try {
    if (want('load')) {
      const folder = join(opts.dir, 'sink-load');
      const lines = await writeLoadFolder(folder, opts.loadRows ?? 1_000_000, sandbox.url);
      const runs: LoadRun[] = [];
      for (let i = 0; i < (opts.loadRounds ?? 2); i += 1) {
        const name = `bre_bench_sink_load_${process.pid}_${i}`;
        made.push(name);
        runs.push(await loadOnce(folder, lines, name));
      }
      rmSync(folder, { recursive: true, force: true });
      result.load = { folderMb: Math.round(lines.bytes / 2 ** 20), runs, rowsPerSecond: median(runs.map((r) => r.rowsPerSecond)) };
    }
    if (want('run')) {
      const rows = opts.runRows ?? 300_000;
      const input = join(opts.dir, `sink-run-${rows}.csv`);
      await writeLocationCsv(input, rows);
      const rounds: SinkRound[] = [];
      for (let r = 0; r < (opts.rounds ?? 2); r += 1) {
        const name = `bre_bench_sink_run_${process.pid}_${r}`;
        made.push(name);
        const without = () => runOnce(undefined, input, rows, join(opts.dir, 'sink-run-without'), sandbox.url);
        const withSink = async () => runOnce(await freshDatabase(name), input, rows, join(opts.dir, 'sink-run-with'), sandbox.url);
        // The order swapped each round: neither variant always gets the quieter minutes.
        let a: SinkRunOnce;
        let b: SinkRunOnce;
        if (r % 2 === 0) {
          b = await withSink();
          a = await without();
        } else {
          a = await without();
          b = await withSink();
        }
        await dropDatabase(name).catch(() => undefined);
        rounds.push({
          without: a, with: b, ratio: ratio(b.rowsPerSecond, a.rowsPerSecond),
          flowRatio: a.flowRowsPerSecond && b.flowRowsPerSecond ? ratio(b.flowRowsPerSecond, a.flowRowsPerSecond) : null,
        });
      }
      rmSync(input, { force: true });
      const flows = rounds.map((r) => r.flowRatio).filter((x): x is number => x !== null);
      result.run = { rows, rounds, ratio: ratio(median(rounds.map((r) => r.ratio)), 1), flowRatio: flows.length > 0 ? ratio(median(flows), 1) : null };
    }
    return result;
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    for (const n of made) await dropDatabase(n).catch(() => undefined);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const parts = args.filter((a) => a === 'load' || a === 'run') as ('load' | 'run')[];
  const dir = join(process.env.TMPDIR ?? '/tmp', `bre-bench-sink-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const r = await benchSink({ dir, only: parts.length > 0 ? parts : undefined, ...(quick ? { loadRows: 200_000, loadRounds: 1, runRows: 100_000, rounds: 1 } : {}) });
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
