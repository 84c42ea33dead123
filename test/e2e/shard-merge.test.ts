/**
 * Shards without a shared limiter (several egress IPs, each with its own limit; issue 6 point 1): N workers
 * over one input each do the rows whose key hashes to their shard; `merge` combines their folders into one
 * holding every row once. A missing shard is warned about, and an unsharded `run --out <merged>` on the same
 * input completes the merge, sending only the rows no shard did. The folders are the point: the runs are the
 * CLI's code in this process (runInProcess, one at a time, without a CLI's start-up each); `merge` is a
 * spawned CLI's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectMatchesJournal } from '../output/parquet-reader.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeOutputs } from '../../src/output/merge.js';
import { shardOf } from '../../src/input/shard.js';
import { runArgs, spawnCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, locationKey, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { locationParquet } from '../helpers/location-parquet.js';

const ROWS = 240;

describe('--shard K/N and merge', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  // A Parquet input's rows are numbered in the file's order: its shards are those of the same rows in CSV.
  it.each([
    ['CSV', locationCsv],
    ['Parquet', locationParquet],
  ])(
    '%s: three shards split the input by key hash; merged, every row appears once; the CSV is rebuilt',
    async (_format, write) => {
      const dir = tempDir('bre-shard-');
      const input = write(dir, ROWS);
      const outs = [1, 2, 3].map((k) => join(dir, `w${k}`));
      const results = await Promise.all(
        outs.map((out, i) =>
          runInProcess(runArgs('location', input, out, '--shard', `${i + 1}/3`, '--rate', 'off'), sb.env()),
        ),
      );
      expect(
        results.map((r) => r.code),
        results.map((r) => r.stderr).join('\n'),
      ).toEqual([0, 0, 0]);
      for (let k = 1; k <= 3; k += 1) {
        const o = readOutput(outs[k - 1]);
        const owned = Array.from({ length: ROWS }, (_, i) => i + 1).filter((r) => shardOf(locationKey(r), r, 3) === k);
        expect(o.results.map((l) => l.row).sort((a, b) => a - b)).toEqual(owned);
        expect(o.summary.rows.out_of_shard).toBe(ROWS - owned.length);
        expect(o.summary.shard).toBe(`${k}/3`);
      }
      const merged = join(dir, 'merged');
      const r = await spawnCli(['merge', ...outs, '--out', merged], {});
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`report: ${join(merged, 'report.html')}`);
      const m = readOutput(merged);
      expect(invariantProblems(ROWS, m)).toEqual([]);
      expect(m.csvLines[0]).toBe(readOutput(outs[0]).csvLines[0]);
      expect(m.summary.finished).toBe(true);
      expect(m.summary.decisions.location).toBeDefined();
      // results.parquet of the merged folder holds every merged row; its report draws the three shards' time series.
      await expectMatchesJournal(
        join(merged, 'results.parquet'),
        join(merged, 'results.ndjson'),
        m.csvLines[0].split(','),
      );
      const html = readFileSync(join(merged, 'report.html'), 'utf8');
      expect(html).toContain('Run report: location (merged)');
      expect(html).toContain('3 sessions over all shards');
    },
    60_000,
  );

  it('a missing shard is completed by an unsharded run into the merged folder, which sends only its rows', async () => {
    const dir = tempDir('bre-shard-missing-');
    const input = locationCsv(dir, ROWS);
    const outs = [1, 2].map((k) => join(dir, `w${k}`));
    for (const [i, out] of outs.entries())
      expect(
        (await runInProcess(runArgs('location', input, out, '--shard', `${i + 1}/3`, '--rate', 'off'), sb.env())).code,
      ).toBe(0);
    const merged = join(dir, 'merged');
    const warnings: string[] = [];
    const r = await mergeOutputs({ dirs: outs, out: merged, log: (l) => warnings.push(l) });
    expect(r.ok).toBe(true);
    expect(warnings.join('\n')).toMatch(/shard 3\/3 not given/);
    const before = sb.sandbox.stats().services.workflow.requests;
    const rest = await runInProcess(runArgs('location', input, merged, '--rate', 'off'), sb.env());
    expect(rest.code, rest.stderr).toBe(0);
    const shard3 = Array.from({ length: ROWS }, (_, i) => i + 1).filter(
      (row) => shardOf(locationKey(row), row, 3) === 3,
    );
    expect(sb.sandbox.stats().services.workflow.requests - before).toBe(shard3.length);
    expect(invariantProblems(ROWS, readOutput(merged))).toEqual([]);
  }, 60_000);

  it('a worker that ran another shard count cannot be merged in', async () => {
    const dir = tempDir('bre-shard-bad-');
    const input = locationCsv(dir, 30);
    expect(
      (await runInProcess(runArgs('location', input, join(dir, 'a'), '--shard', '1/2', '--rate', 'off'), sb.env()))
        .code,
    ).toBe(0);
    expect(
      (await runInProcess(runArgs('location', input, join(dir, 'b'), '--shard', '2/3', '--rate', 'off'), sb.env()))
        .code,
    ).toBe(0);
    await expect(mergeOutputs({ dirs: [join(dir, 'a'), join(dir, 'b')], out: join(dir, 'm') })).rejects.toThrow(
      /Expected one of 2/,
    );
  }, 60_000);
});
