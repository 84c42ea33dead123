/**
 * Bench helpers: spawn the CLI as a user would, synthesise inputs, time things. The benchmark runs from its
 * sources through tsx (`npm run bench`); what it measures in other processes is the shipped build in dist/
 * (`npm run bench` builds it first), run by plain node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../src/config/paths.js';

export const CLI = join(PACKAGE_ROOT, 'bin', 'bre-batch.js');

/**
 * The file URL of a module of the shipped build, e.g. `shippedModule('output/spool/spool.js')`, or of a package's
 * build, e.g. `shippedModule('compare.js', 'backtest')` (packages/backtest/dist/compare.js).
 */
export function shippedModule(path: string, workspacePackage?: string): string {
  const dist = workspacePackage ? join(PACKAGE_ROOT, 'packages', workspacePackage, 'dist') : join(PACKAGE_ROOT, 'dist');
  return pathToFileURL(join(dist, path)).href;
}

/** `node --import tsx <bench file>`: a helper process of the benchmark itself, run from its TypeScript. */
export function benchScriptArgs(file: string, args: readonly string[]): string[] {
  return ['--import', 'tsx', join(PACKAGE_ROOT, 'bench', file), ...args];
}

/** Credentials of the sandboxes the benchmark starts in their own process. */
export const CLIENT_ID = 'benchclient';
export const TOKEN = 'benchtoken0123456789';

/** `bre-batch sandbox --rate off --port 0` in its own process; its URL read from the banner on stdout. */
export async function startSandboxProcess(
  rate: readonly string[] = ['off'],
  extra: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [CLI, 'sandbox', ...rate.flatMap((r) => ['--rate', r]), '--port', '0', ...extra],
    {
      env: { ...process.env, BRE_CLIENT_ID: CLIENT_ID, BRE_AUTH_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the sandbox printed no URL within 20 s: ${err}`)), 20_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /export BRE_BASE_URL=(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code}): ${err}`)));
  });
  return { url, child };
}

export interface CliRun {
  readonly code: number | null;
  readonly seconds: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI; with `interruptAfterMs` it gets SIGINT then (a run measured for a while, not to the end). */
export async function runCli(
  args: readonly string[],
  env: Record<string, string>,
  interruptAfterMs?: number,
  cli: string = CLI,
): Promise<CliRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = interruptAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), interruptAfterMs);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (timer) clearTimeout(timer);
  return { code, seconds: (performance.now() - t0) / 1000, stdout, stderr };
}

/**
 * A location_bre input of `rows` rows over real Indian coordinates, or every row at `at` (the request a fixed
 * load generator sends, so that the server does the same work for both).
 */
export async function writeLocationCsv(
  path: string,
  rows: number,
  at?: { readonly latitude: string; readonly longitude: string },
): Promise<void> {
  const out = createWriteStream(path);
  out.write('reference_id,user_id,lead_id,latitude,longitude\n');
  for (let i = 1; i <= rows; i += 1) {
    const lat = at?.latitude ?? (8 + ((i * 7919) % 2700) / 100).toFixed(4);
    const lng = at?.longitude ?? (69 + ((i * 104729) % 2000) / 100).toFixed(4);
    if (!out.write(`B-${i},u${i},l${i},${lat},${lng}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** The rows of writeLocationCsv as a Parquet file (hyparquet-writer, SNAPPY, its default row groups of 100,000). */
export async function writeLocationParquet(path: string, rows: number): Promise<void> {
  const { fileWriter, parquetWriteRows } = await import('hyparquet-writer');
  function* each(): Generator<Record<string, unknown>> {
    for (let i = 1; i <= rows; i += 1) {
      yield {
        reference_id: `B-${i}`,
        user_id: `u${i}`,
        lead_id: `l${i}`,
        latitude: Number((8 + ((i * 7919) % 2700) / 100).toFixed(4)),
        longitude: Number((69 + ((i * 104729) % 2000) / 100).toFixed(4)),
      };
    }
  }
  const text = { type: 'STRING' as const };
  const number = { type: 'DOUBLE' as const };
  await parquetWriteRows({
    writer: fileWriter(path),
    rows: each(),
    columns: [
      { name: 'reference_id', ...text },
      { name: 'user_id', ...text },
      { name: 'lead_id', ...text },
      { name: 'latitude', ...number },
      { name: 'longitude', ...number },
    ],
  });
}

/**
 * A `rescore` input of `rows` rows cycled from samples/rescore.csv, written beside it in samples/ (its rows
 * name report files relative to that folder); the caller removes it.
 */
export function writeRescoreCsv(rows: number, prefix: string): string {
  const sample = readFileSync(join(PACKAGE_ROOT, 'samples', 'rescore.csv'), 'utf8')
    .trim()
    .split('\n');
  const lines = [sample[0]];
  for (let i = 0; i < rows; i += 1) {
    const src = sample[1 + (i % (sample.length - 1))].split(',');
    src[0] = `${prefix}-${i + 1}`;
    lines.push(src.join(','));
  }
  const path = join(PACKAGE_ROOT, 'samples', `.bench-${prefix}-${process.pid}.csv`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

export function ratio(a: number, b: number): number {
  return Math.round((a / b) * 1000) / 1000;
}
