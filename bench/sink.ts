/**
 * The database sink (issue 23's two targets), against the local PostgreSQL:
 * - `load`: rows a second that `bre-batch load OUT --sink postgres://...` writes from an output folder of
 *   `loadRows` rows (1M), over the whole process as a user waits (start-up, the tables made, the last commit):
 *   at least 20,000. Two folders: `location`'s lines (about 25 columns, 0.7 KB a line) and `rescore`'s (about
 *   70 columns and a 2.3 KB `result`: a wide one). Each is a real run of a few hundred rows whose
 *   results lines are replicated with new row numbers and keys (every 50th row an error line instead), with the
 *   run's own manifest; each round loads it into a database of its own (empty tables: a backfill), the median
 *   round the figure. Beside it, informative: PostgreSQL's own COPY of the loaded table into another like it
 *   (its text streamed from a file, nothing parsed or encoded on this side), the most the server does here;
 * - `run`: `run location --rate off` with `--sink` against the same run without it, rows a second over the
 *   whole process (and while rows flow, summary.json's): at least 90%. The sandbox is in another process, the
 *   two variants taken in turn, the order swapped each round, the median round's ratio the figure (these
 *   machines are shared and their load drifts over the minutes a run takes). The run with a sink ends once the
 *   tables have its last row (finishSink): its time includes the catching up.
 *
 * Needs the local PostgreSQL of the tests (BRE_TEST_PG_URL overrides it); its databases are dropped at the end.
 *
 *   npx tsx bench/sink.ts [load] [run] [--quick]   # standalone (after npm run build): prints the JSON
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import copyStreams from 'pg-copy-streams';
import { openSession, parseDbUrl } from '../src/db/index.js';
import { pgClientOf } from '../src/db/postgres.js';
import { FILES, readRunSummary } from '@bre-batch/formats';
import { CLI, CLIENT_ID, ratio, startSandboxProcess, TOKEN, writeLocationCsv, writeRescoreCsv } from './harness.js';

const ADMIN = process.env.BRE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The pipelines a load folder is made from. */
type LoadPipeline = 'location' | 'rescore';

interface LoadRun {
  readonly exit: number | null;
  readonly seconds: number;
  /** Lines (results and errors) over the whole process's time. */
  readonly rowsPerSecond: number;
  /** Rows the tables hold afterwards: all of them. */
  readonly inTables: { readonly results: number | null; readonly errors: number | null };
}

interface LoadFigure {
  readonly pipeline: LoadPipeline;
  readonly rows: number;
  readonly results: number;
  readonly errors: number;
  readonly folderMb: number;
  readonly runs: readonly LoadRun[];
  /** The median round's. */
  readonly rowsPerSecond: number;
  /** PostgreSQL's COPY of the loaded table from a server-side file into another like it (null: not allowed). */
  readonly serverCopyRowsPerSecond: number | null;
}

interface SinkRunOnce {
  readonly exit: number | null;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  /** summary.json's: first row dispatched to last settled. */
  readonly flowRowsPerSecond: number | null;
  /** Rows the table holds after the run with a sink (null without). */
  readonly inTable: number | null;
}

interface SinkRound {
  readonly without: SinkRunOnce;
  readonly with: SinkRunOnce;
  /** With over without: whole process, and while rows flow. */
  readonly ratio: number;
  readonly flowRatio: number | null;
}

interface SinkRunFigure {
  readonly rows: number;
  readonly rounds: readonly SinkRound[];
  readonly ratio: number;
  readonly flowRatio: number | null;
}

export interface SinkBenchResult {
  readonly load?: readonly LoadFigure[];
  readonly run?: SinkRunFigure;
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

async function onDatabase<T>(
  url: string,
  work: (q: (sql: string) => Promise<Record<string, unknown>[]>) => Promise<T>,
): Promise<T> {
  const s = await openSession(parseDbUrl(url, { flag: 'bench' }));
  try {
    return await work(async (sql) => (await s.query<Record<string, unknown>>(sql)).rows);
  } finally {
    await s.close();
  }
}

async function freshDatabase(name: string): Promise<string> {
  await onDatabase(ADMIN, async (q) => {
    await q(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await q(`CREATE DATABASE "${name}"`);
  });
  return urlOf(name);
}

async function dropDatabase(name: string): Promise<void> {
  await onDatabase(ADMIN, async (q) => q(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

async function countRows(url: string, table: string): Promise<number | null> {
  return onDatabase(url, async (q) => Number((await q(`SELECT count(*) AS n FROM "${table}"`))[0].n)).catch(() => null);
}

function envFor(sandboxUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    BRE_BASE_URL: sandboxUrl,
    BUREAU_BASE_URL: sandboxUrl,
    ACCOUNT_BASE_URL: sandboxUrl,
    BRE_CLIENT_ID: CLIENT_ID,
    BRE_AUTH_TOKEN: TOKEN,
  };
}

/** The CLI as a user runs it (the shipped build); its exit code, seconds and stderr. */
async function cli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; seconds: number; stderr: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, seconds: (performance.now() - t0) / 1000, stderr };
}

/**
 * An output folder of `rows` rows as `run <pipeline>` writes it: a real run of `seedRows` rows, its results lines
 * replicated with new row numbers and keys (`SK-<row>`), every `errorEvery`-th row an error line instead (a
 * call that failed), the run's manifest. Returns the lines written and the journals' size.
 */
async function writeLoadFolder(
  out: string,
  pipeline: LoadPipeline,
  rows: number,
  sandboxUrl: string,
  o: { seedRows?: number; errorEvery?: number } = {},
): Promise<{ results: number; errors: number; bytes: number }> {
  const seed = `${out}-seed`;
  const seedRows = o.seedRows ?? 240;
  let input: string;
  if (pipeline === 'rescore') input = writeRescoreCsv(seedRows, 'SINKSEED');
  else await writeLocationCsv((input = `${out}-seed.csv`), seedRows);
  try {
    rmSync(seed, { recursive: true, force: true });
    const r = await cli(
      ['run', pipeline, '--input', input, '--out', seed, '--rate', 'off', '--no-progress'],
      envFor(sandboxUrl),
    );
    if (r.code !== 0) throw new Error(`the seed run of ${pipeline} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  } finally {
    rmSync(input, { force: true });
  }
  // Each line without its `{"row":N,"key":"K",` head: the rest follows a new head.
  const tails = readFileSync(join(seed, FILES.results), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const m = /^\{"row":\d+,"key":"[^"]*",/.exec(l);
      if (!m) throw new Error(`unexpected results line: ${l.slice(0, 80)}`);
      return l.slice(m[0].length);
    });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, FILES.state), { recursive: true });
  writeFileSync(join(out, FILES.manifest), readFileSync(join(seed, FILES.manifest)));
  rmSync(seed, { recursive: true, force: true });
  const errorEvery = o.errorEvery ?? 50;
  const results = createWriteStream(join(out, FILES.results));
  const errors = createWriteStream(join(out, FILES.errors));
  let nResults = 0;
  let nErrors = 0;
  let bytes = 0;
  let chunk: string[] = [];
  let errorChunk: string[] = [];
  const flush = async () => {
    const text = chunk.join('');
    const errorText = errorChunk.join('');
    bytes += Buffer.byteLength(text) + Buffer.byteLength(errorText);
    chunk = [];
    errorChunk = [];
    if (!results.write(text)) await once(results, 'drain');
    if (errorText !== '' && !errors.write(errorText)) await once(errors, 'drain');
  };
  for (let i = 1; i <= rows; i += 1) {
    const key = `SK-${i}`;
    if (i % errorEvery === 0) {
      nErrors += 1;
      errorChunk.push(
        `${JSON.stringify({ row: i, line: i + 1, key, stage: null, status: 503, code: 'SERVER_UNAVAILABLE', message: 'the server was unavailable after 5 attempts', attempts: 5, input: null })}\n`,
      );
    } else {
      nResults += 1;
      chunk.push(`{"row":${i},"key":"${key}",${tails[i % tails.length]}\n`);
    }
    if (chunk.length >= 2000) await flush();
  }
  await flush();
  results.end();
  errors.end();
  await Promise.all([once(results, 'finish'), once(errors, 'finish')]);
  return { results: nResults, errors: nErrors, bytes };
}

/** `bre-batch load OUT --sink URL` into a database of its own; rows a second over the whole process. */
async function loadOnce(
  out: string,
  pipeline: LoadPipeline,
  lines: { results: number; errors: number },
  dbName: string,
  keep = false,
): Promise<LoadRun> {
  const url = await freshDatabase(dbName);
  try {
    const r = await cli(['load', out, '--sink', url], { ...process.env });
    if (r.code !== 0)
      process.stderr.write(`bench sink: load of ${pipeline} exited ${r.code}: ${r.stderr.slice(-2000)}\n`);
    return {
      exit: r.code,
      seconds: Math.round(r.seconds * 10) / 10,
      rowsPerSecond: Math.round((lines.results + lines.errors) / r.seconds),
      inTables: { results: await countRows(url, pipeline), errors: await countRows(url, `${pipeline}_errors`) },
    };
  } finally {
    if (!keep) await dropDatabase(dbName).catch(() => undefined);
  }
}

/**
 * PostgreSQL alone: the loaded table copied out to a file here, then that file COPYed into a table like it (its
 * key, its compression) as fast as the server takes it; rows a second of the COPY in.
 */
async function serverCopy(dbName: string, table: string, dir: string): Promise<number | null> {
  const file = join(dir, `${table}.copy`);
  const session = await openSession(parseDbUrl(urlOf(dbName), { flag: 'bench' }));
  try {
    const client = pgClientOf(session);
    await pipeline(client.query(copyStreams.to(`COPY "${table}" TO STDOUT`)), createWriteStream(file));
    await session.query(`CREATE TABLE copy_in (LIKE "${table}" INCLUDING ALL)`);
    await session.query('SET default_toast_compression = lz4');
    const t0 = performance.now();
    await pipeline(
      createReadStream(file, { highWaterMark: 1 << 20 }),
      client.query(copyStreams.from('COPY copy_in FROM STDIN')),
    );
    const seconds = (performance.now() - t0) / 1000;
    const n = Number((await session.query<{ n: string }>('SELECT count(*) AS n FROM copy_in')).rows[0].n);
    return Math.round(n / seconds);
  } catch (err) {
    process.stderr.write(`bench sink: the server's own COPY was not measured: ${(err as Error).message}\n`);
    return null;
  } finally {
    await session.close();
    rmSync(file, { force: true });
  }
}

async function benchLoad(
  dir: string,
  pipeline: LoadPipeline,
  rows: number,
  rounds: number,
  sandboxUrl: string,
  made: string[],
): Promise<LoadFigure> {
  const folder = join(dir, `sink-load-${pipeline}`);
  try {
    const lines = await writeLoadFolder(folder, pipeline, rows, sandboxUrl);
    const runs: LoadRun[] = [];
    let floor: number | null = null;
    for (let i = 0; i < rounds; i += 1) {
      const name = `bre_bench_sink_load_${pipeline}_${process.pid}_${i}`;
      made.push(name);
      const last = i === rounds - 1;
      runs.push(await loadOnce(folder, pipeline, lines, name, last));
      if (last) {
        floor = await serverCopy(name, pipeline, dir);
        await dropDatabase(name).catch(() => undefined);
      }
    }
    return {
      pipeline,
      rows,
      results: lines.results,
      errors: lines.errors,
      folderMb: Math.round(lines.bytes / 2 ** 20),
      runs,
      rowsPerSecond: median(runs.map((r) => r.rowsPerSecond)),
      serverCopyRowsPerSecond: floor,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function runOnce(
  sink: string | undefined,
  input: string,
  rows: number,
  out: string,
  sandboxUrl: string,
): Promise<SinkRunOnce> {
  rmSync(out, { recursive: true, force: true });
  const r = await cli(
    [
      'run',
      'location',
      '--input',
      input,
      '--out',
      out,
      '--rate',
      'off',
      '--no-progress',
      ...(sink ? ['--sink', sink] : []),
    ],
    envFor(sandboxUrl),
  );
  if (r.code !== 0)
    process.stderr.write(
      `bench sink: run ${sink ? 'with' : 'without'} --sink exited ${r.code}: ${r.stderr.slice(-2000)}\n`,
    );
  const read = readRunSummary(out);
  const summary = read.state === 'ok' ? read.value : undefined;
  rmSync(out, { recursive: true, force: true });
  return {
    exit: r.code,
    seconds: Math.round(r.seconds * 10) / 10,
    rowsPerSecond: Math.round(rows / r.seconds),
    flowRowsPerSecond:
      summary?.rows_per_second === null || summary === undefined ? null : Math.round(summary.rows_per_second),
    inTable: sink ? await countRows(sink, 'location') : null,
  };
}

async function benchRun(
  dir: string,
  rows: number,
  rounds: number,
  sandboxUrl: string,
  made: string[],
): Promise<SinkRunFigure> {
  const input = join(dir, `sink-run-${rows}.csv`);
  await writeLocationCsv(input, rows);
  try {
    const out: SinkRound[] = [];
    for (let r = 0; r < rounds; r += 1) {
      const name = `bre_bench_sink_run_${process.pid}_${r}`;
      made.push(name);
      const without = () => runOnce(undefined, input, rows, join(dir, 'sink-run-without'), sandboxUrl);
      const withSink = async () =>
        runOnce(await freshDatabase(name), input, rows, join(dir, 'sink-run-with'), sandboxUrl);
      // The order swapped each round: neither variant always gets the quieter minutes.
      let a: SinkRunOnce;
      let b: SinkRunOnce;
      if (r % 2 === 0) {
        a = await without();
        b = await withSink();
      } else {
        b = await withSink();
        a = await without();
      }
      await dropDatabase(name).catch(() => undefined);
      out.push({
        without: a,
        with: b,
        ratio: ratio(b.rowsPerSecond, a.rowsPerSecond),
        flowRatio: a.flowRowsPerSecond && b.flowRowsPerSecond ? ratio(b.flowRowsPerSecond, a.flowRowsPerSecond) : null,
      });
    }
    const flows = out.map((r) => r.flowRatio).filter((x): x is number => x !== null);
    return {
      rows,
      rounds: out,
      ratio: ratio(median(out.map((r) => r.ratio)), 1),
      flowRatio: flows.length > 0 ? ratio(median(flows), 1) : null,
    };
  } finally {
    rmSync(input, { force: true });
  }
}

export interface SinkBenchOptions {
  readonly dir: string;
  /** Rows of each load folder (1,000,000) and loads of each (2). */
  readonly loadRows?: number;
  readonly loadRounds?: number;
  readonly loadPipelines?: readonly LoadPipeline[];
  /** Rows of the run (300,000: tens of seconds each) and rounds of the two variants (3: the median is one of them). */
  readonly runRows?: number;
  readonly rounds?: number;
  readonly only?: readonly ('load' | 'run')[];
}

export async function benchSink(opts: SinkBenchOptions): Promise<SinkBenchResult> {
  const want = (p: 'load' | 'run') => !opts.only || opts.only.includes(p);
  const sandbox = await startSandboxProcess();
  const made: string[] = [];
  try {
    const load: LoadFigure[] = [];
    if (want('load')) {
      for (const p of opts.loadPipelines ?? (['location', 'rescore'] as const))
        load.push(await benchLoad(opts.dir, p, opts.loadRows ?? 1_000_000, opts.loadRounds ?? 2, sandbox.url, made));
    }
    const run = want('run')
      ? await benchRun(opts.dir, opts.runRows ?? 300_000, opts.rounds ?? 3, sandbox.url, made)
      : undefined;
    return { ...(load.length > 0 ? { load } : {}), ...(run ? { run } : {}) };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    for (const n of made) await dropDatabase(n).catch(() => undefined);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const parts = args.filter((a): a is 'load' | 'run' => a === 'load' || a === 'run');
  const dir = join(process.env.TMPDIR ?? '/tmp', `bre-bench-sink-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const r = await benchSink({
      dir,
      only: parts.length > 0 ? parts : undefined,
      ...(quick ? { loadRows: 200_000, loadRounds: 1, runRows: 100_000, rounds: 1 } : {}),
    });
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
