/**
 * results.csv and results.parquet in input order however the answers arrived (issue 31): the sandbox holds
 * some answers back (its `slow` fault), so results.ndjson, the journal, is in the order rows finished, and
 * the results files are in row order: for the sample bank run, for a run long enough to start the spool's
 * thread, after a kill -9 and a resume, and after --retry-errors. The files are the point: but for the one
 * killed, the runs are the CLI's code in this process (runInProcess: the same options, resolution and
 * executeRun, the spool's thread from dist/ as the CLI starts it), without a CLI's start-up each.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, runArgs, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { expectMatchesJournal, readParquet } from '../output/parquet-reader.js';

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The rows of results.ndjson (as they finished), results.csv and results.parquet. */
async function orders(out: string): Promise<{ journal: number[]; csv: number[]; parquet: number[] }> {
  const journal = readOutput(out).results.map((l) => l.row);
  const csv = (parse(readFileSync(join(out, 'results.csv'), 'utf8'), { from_line: 2 }) as string[][]).map((r) =>
    Number(r[0]),
  );
  const parquet = (await readParquet(join(out, 'results.parquet'))).rows.map((r) => Number(r.row));
  await expectMatchesJournal(
    join(out, 'results.parquet'),
    join(out, 'results.ndjson'),
    readFileSync(join(out, 'results.csv'), 'utf8').split('\n')[0].split(','),
  );
  return { journal, csv, parquet };
}

const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);

describe('results in input order', () => {
  let sb: TestSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it('the sample bank run: answers held back, the files in row order', async () => {
    // Every other answer held 300 ms: rows 1, 3, 5 finish after 2 and 4.
    sb = await startTestSandbox({
      rate: { workflow: null, bureau: null, account: null },
      faults: { slow: 0.5 },
      slowMs: 300,
      seed: 3,
    });
    const out = join(tempDir(), 'out');
    const r = await runInProcess(
      runArgs('bank', join(ROOT, 'samples', 'bank.ndjson'), out, '--rate', 'off', '--concurrency', '8'),
      sb.env(),
    );
    expect([0, 1], r.stderr).toContain(r.code);
    const o = await orders(out);
    expect(o.journal).not.toEqual(sorted(o.journal));
    expect(o.csv).toEqual(sorted(o.journal));
    expect(o.parquet).toEqual(sorted(o.journal));
  });

  it("a long run (the spool's thread), then a kill -9 and a resume, then --retry-errors: in row order each time", async () => {
    const ROWS = 3000;
    sb = await startTestSandbox({
      rate: { workflow: null },
      faults: { slow: 0.05, 503: 0.03 },
      slowMs: 400,
      latencyMs: 2,
      seed: 11,
    });
    const dir = tempDir();
    const input = locationCsv(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'off', '--concurrency', '32', '--max-attempts', '1');
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 1200);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const second = await runInProcess(args, sb.env());
    expect(second.code, second.stderr).toBe(1);
    const resumed = readOutput(out);
    expect(invariantProblems(ROWS, resumed)).toEqual([]);
    expect(resumed.summary.rows.resumed).toBeGreaterThan(0);
    const o = await orders(out);
    expect(o.journal).not.toEqual(sorted(o.journal));
    expect(o.csv).toEqual(sorted(o.journal));
    expect(o.parquet).toEqual(sorted(o.journal));

    // The rows held back by the 503s go through now, out of order too, and land in their places.
    const failed = resumed.errors.map((e) => e.row);
    expect(failed.length).toBeGreaterThan(20);
    await sb.close();
    sb = await startTestSandbox({ rate: { workflow: null }, faults: { slow: 0.2 }, slowMs: 300, seed: 5 });
    const retry = await runInProcess([...args, '--retry-errors'], sb.env());
    expect(retry.code, retry.stderr).toBe(0);
    const after = await orders(out);
    expect(after.csv).toEqual(range(ROWS));
    expect(after.parquet).toEqual(range(ROWS));
    expect(invariantProblems(ROWS, readOutput(out))).toEqual([]);
  }, 180_000);
});
