/**
 * Parquet input resumes and shards exactly as CSV does (issue 12): row numbers are the file's row order, so
 * a `kill -9` mid-run and the same command again give every row once, with no successful call repeated
 * beyond those in flight at the kill; `--shard K/N` puts each row in the same shard as the same row in CSV.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeParquetRows } from '../../scripts/convert-samples.mjs';
import {
  BUILT, invariantProblems, locationCsv, locationKey, readOutput, runArgs, spawnCli, startCli, startCountingProxy,
  startTestSandbox, tempDir, waitForLines, type CountingProxy, type TestSandbox,
} from './helpers.js';

const ROWS = 300;
const CONCURRENCY = 8;

/** The rows of locationCsv as a Parquet file (typed: latitude and longitude DOUBLE), 40 rows a row group. */
function locationParquet(dir: string, n: number): string {
  const rows = Array.from({ length: n }, (_, i) => {
    const id = String(i + 1).padStart(6, '0');
    return {
      reference_id: locationKey(i + 1), user_id: `user${id}`, lead_id: `lead${id}`,
      latitude: Number((10 + (((i + 1) * 7919) % 2000) / 100).toFixed(4)),
      longitude: Number((72 + (((i + 1) * 104729) % 1600) / 100).toFixed(4)),
    };
  });
  const path = join(dir, 'input.parquet');
  writeParquetRows(path, rows, { rowGroupSize: 40 });
  return path;
}

describe.skipIf(!BUILT)('Parquet input: resume and shards as for CSV', () => {
  let sb: TestSandbox;
  let proxy: CountingProxy;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, latencyMs: 150 });
    proxy = await startCountingProxy(sb.sandbox.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await sb?.close();
  });

  it('kill -9 mid-run, then the same command: every row once, no success repeated beyond those in flight', async () => {
    const dir = tempDir();
    const input = locationParquet(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=50/s', '--concurrency', String(CONCURRENCY));
    const first = startCli(args, sb.env(proxy.url));
    await waitForLines(first, join(out, 'results.ndjson'), 60);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const before = readOutput(out);
    const doneBefore = before.results.length + before.errors.length;
    expect(doneBefore).toBeLessThan(ROWS);

    const second = await spawnCli(args, sb.env(proxy.url));
    expect(second.code, second.stderr).toBe(0);
    const after = readOutput(out);
    expect(invariantProblems(ROWS, after)).toEqual([]);
    expect(after.summary.rows.resumed).toBe(doneBefore);
    // Row numbers are the file's order: row n is the n-th row written.
    expect(after.results.every((l) => l.key === locationKey(l.row))).toBe(true);
    expect(proxy.successes.size).toBe(ROWS);
    expect(proxy.repeated().size).toBeLessThanOrEqual(CONCURRENCY);
  }, 90_000);

  it('--shard K/2: each row in the same shard as in the CSV; the shards together are the file', async () => {
    const dir = tempDir();
    const n = 60;
    const parquet = locationParquet(dir, n);
    const csv = locationCsv(dir, n);
    const keysOf = async (input: string, shard: string) => {
      const out = join(dir, `out-${shard.replace('/', 'of')}-${input.endsWith('.csv') ? 'csv' : 'pq'}`);
      const r = await spawnCli(runArgs('location', input, out, '--shard', shard, '--rate', 'off', '--concurrency', '32'), sb.env());
      expect(r.code, r.stderr).toBe(0);
      return readOutput(out).results.map((l) => `${l.row}:${String(l.key)}`).sort();
    };
    const [p1, p2, c1, c2] = await Promise.all([keysOf(parquet, '1/2'), keysOf(parquet, '2/2'), keysOf(csv, '1/2'), keysOf(csv, '2/2')]);
    expect(p1).toEqual(c1);
    expect(p2).toEqual(c2);
    expect(p1.length + p2.length).toBe(n);
    expect(new Set([...p1, ...p2]).size).toBe(n);
  }, 90_000);
});
