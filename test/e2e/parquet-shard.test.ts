/**
 * Parquet input shards exactly as CSV does (issue 12): `--shard K/N` puts each row in the same shard as the
 * same row of the CSV, and the shards together are the file. (Resuming Parquet: test/e2e/resume.test.ts.)
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT, locationCsv, readOutput, runArgs, spawnCli, startTestSandbox, tempDir, type TestSandbox } from './helpers.js';
import { locationParquet } from './location-parquet.js';

describe.skipIf(!BUILT)('Parquet input: shards as for CSV', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('--shard K/2: each row in the same shard as in the CSV; the shards together are the file', async () => {
    const dir = tempDir();
    const n = 120;
    const parquet = locationParquet(dir, n);
    const csv = locationCsv(dir, n);
    const keysOf = async (input: string, shard: string) => {
      const out = join(dir, `out-${shard.replace('/', 'of')}-${input.endsWith('.csv') ? 'csv' : 'pq'}`);
      const r = await spawnCli(runArgs('location', input, out, '--shard', shard, '--rate', 'off'), sb.env());
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
