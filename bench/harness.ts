/**
 * Bench helpers: spawn the CLI as a user would, synthesise inputs, time things. The benchmark runs from its
 * sources through tsx (`npm run bench`); what it measures in other processes is the shipped build in dist/
 * (`npm run bench` builds it first), run by plain node.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../src/config/paths.js';

export const CLI = join(PACKAGE_ROOT, 'bin', 'bre-batch.js');

/** The file URL of a module of the shipped build, e.g. `shippedModule('backtest/compare.js')`. */
export function shippedModule(path: string): string {
  return pathToFileURL(join(PACKAGE_ROOT, 'dist', path)).href;
}

/** `node --import tsx <bench file>`: a helper process of the benchmark itself, run from its TypeScript. */
export function benchScriptArgs(file: string, args: readonly string[]): string[] {
  return ['--import', 'tsx', join(PACKAGE_ROOT, 'bench', file), ...args];
}

export interface CliRun {
  readonly code: number | null;
  readonly seconds: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI; with `interruptAfterMs` it gets SIGINT then (a run measured for a while, not to the end). */
export async function runCli(args: readonly string[], env: Record<string, string>, interruptAfterMs?: number): Promise<CliRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = interruptAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGINT'), interruptAfterMs);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (timer) clearTimeout(timer);
  return { code, seconds: (performance.now() - t0) / 1000, stdout, stderr };
}

/** A location_bre input of `rows` rows over real Indian coordinates. */
export async function writeLocationCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('reference_id,user_id,lead_id,latitude,longitude\n');
  for (let i = 1; i <= rows; i += 1) {
    const lat = (8 + ((i * 7919) % 2700) / 100).toFixed(4);
    const lng = (69 + ((i * 104729) % 2000) / 100).toFixed(4);
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
        reference_id: `B-${i}`, user_id: `u${i}`, lead_id: `l${i}`,
        latitude: Number((8 + ((i * 7919) % 2700) / 100).toFixed(4)), longitude: Number((69 + ((i * 104729) % 2000) / 100).toFixed(4)),
      };
    }
  }
  const text = { type: 'STRING' as const };
  const number = { type: 'DOUBLE' as const };
  await parquetWriteRows({
    writer: fileWriter(path),
    rows: each(),
    columns: [{ name: 'reference_id', ...text }, { name: 'user_id', ...text }, { name: 'lead_id', ...text }, { name: 'latitude', ...number }, { name: 'longitude', ...number }],
  });
}

export function ratio(a: number, b: number): number {
  return Math.round((a / b) * 1000) / 1000;
}
