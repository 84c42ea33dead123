/**
 * Inputs for the database sink's e2e tests: rows to load into a source table (location, and the AA sample
 * repeated with fresh keys), a seeded PRNG for kill points, the commit table read back, and a wait on a
 * table's rows through one session.
 */
import { journalText } from './output.js';
import { join } from 'node:path';
import { openSession, parseDbUrl } from '../../src/db/index.js';
import { ROOT, type RunningCli } from './cli.js';
import { readSampleRows, type SampleRow } from './db-load.js';
import { sleep } from './wait.js';
import { mulberry32 } from '@bre-batch/sandbox/logic/hash';

/** `n` rows for the location pipeline, keys LOC-000001... (a latitude out of range, a row error, at `bad`). */
export function locationRows(n: number, bad: readonly number[] = [], first = 1): SampleRow[] {
  return Array.from({ length: n }, (_, j) => {
    const i = j + first;
    const id = String(i).padStart(6, '0');
    const lat = bad.includes(i) ? '999.0000' : (10 + ((i * 7919) % 2000) / 100).toFixed(4);
    return {
      reference_id: `LOC-${id}`,
      user_id: `user${id}`,
      lead_id: `lead${id}`,
      latitude: lat,
      longitude: (72 + ((i * 104729) % 1600) / 100).toFixed(4),
    };
  });
}

/** locationRows as a CSV file's text. */
export function locationCsvText(rows: readonly SampleRow[]): string {
  const cols = ['reference_id', 'user_id', 'lead_id', 'latitude', 'longitude'];
  return `${[cols.join(','), ...rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))).join(','))].join('\n')}\n`;
}

/** The AA sample's rows repeated to `n` with fresh keys AA-000001... */
export function aaRows(n: number): SampleRow[] {
  const sample = readSampleRows(join(ROOT, 'samples', 'aa_transactions.csv'));
  return Array.from({ length: n }, (_, i) => ({
    ...sample[i % sample.length],
    reference_id: `AA-${String(i + 1).padStart(6, '0')}`,
  }));
}

/** A seeded PRNG (the sandbox's mulberry32): the kill points are random but the same on every run of the test. */
export const prng = (seed: number): (() => number) => mulberry32(seed);

export interface LoadsRow {
  readonly sink_table: string;
  readonly folder: string;
  readonly path: string;
  readonly results_bytes: number;
  readonly errors_bytes: number;
  readonly batches: number;
}

/** The commit table's rows (none when it does not exist yet). */
export async function loadsRows(url: string): Promise<LoadsRow[]> {
  const session = await openSession(parseDbUrl(url, { flag: 'test' }));
  try {
    const r = await session.query<Record<string, unknown>>('SELECT * FROM bre_batch_loads');
    return r.rows.map((x) => ({
      sink_table: String(x.sink_table),
      folder: String(x.folder),
      path: String(x.path),
      results_bytes: Number(x.results_bytes),
      errors_bytes: Number(x.errors_bytes),
      batches: Number(x.batches),
    }));
  } catch {
    return [];
  } finally {
    await session.close();
  }
}

/**
 * Waits until `cond` holds of what `probe` reads through one session of the database at `url`, while `run`
 * runs; fails with its stderr if it exits first. The time-out only keeps a broken build from hanging.
 */
export async function waitForTable<T>(
  run: RunningCli,
  url: string,
  probe: string,
  cond: (rows: T[]) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const session = await openSession(parseDbUrl(url, { flag: 'test' }));
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const rows = await session.query<T>(probe).then(
        (r) => r.rows,
        () => [] as T[],
      );
      if (cond(rows)) return;
      if (run.child.exitCode !== null || run.child.signalCode !== null)
        throw new Error(
          `the CLI exited (${run.child.exitCode ?? run.child.signalCode}) before ${what}:\n${run.stderr()}`,
        );
      if (Date.now() > until)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${run.stderr()}`);
      await sleep(25);
    }
  } finally {
    await session.close();
  }
}

/** The keys of the whole lines within the first `bytes` bytes of an NDJSON journal. */
export function keysWithin(path: string, bytes: number, field: 'key' | 'row' = 'key'): string[] {
  // A finished run's journal is gzip'ed: positions count its plain bytes (packages/formats/src/journal-file.ts).
  const text = Buffer.from(journalText(path)).subarray(0, bytes).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => String((JSON.parse(l) as Record<string, unknown>)[field]));
}
