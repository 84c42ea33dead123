/**
 * The end of a resumed run (issue 31): a run stopped by SIGTERM with rows in flight, then the same command.
 * The rows in flight at the stop are done by the second session, so its rows and the first's interleave
 * where they meet; the end uses the first end's results files (by their index) and the second session's
 * spooled chunks where no row of the other falls inside, and encodes the rest from the journal. results.csv and results.parquet must hold every row once, in row
 * order, the same as an uninterrupted run's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { expectMatchesJournal, parquetRowGroups, readParquet } from '../output/parquet-reader.js';

/**
 * Chunks of 1,000 rows (BRE_ROW_GROUP_ROWS, a tenth of the spool's 10,000): the same boundaries as a run of
 * 60,000 rows at its own, crossed by a tenth of the rows (each session's run of them is most of this file's CPU).
 */
const CHUNK_ROWS = 1000;
/** The first session stopped after STOP_AFTER lines: two chunks and more of its own. */
const STOP_AFTER = 2000;
/**
 * More rows than the chunks the first session ends in: the second session has a chunk where the sessions meet
 * and several past it, and more rows than its reorder buffer (4,096) holds.
 */
const ROWS = 7000;
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * CSV records without the request id column (the sandbox's counter differs between two runs) and the run's id
 * and session (another folder, in one session).
 */
function withoutIds(records: readonly string[][]): string[][] {
  const at = records[0].findIndex((c) => c.endsWith('request_id'));
  expect(at).toBeGreaterThan(0);
  expect(records[0].slice(-2)).toEqual(['run_id', 'run_session']);
  return records.map((r) => r.filter((_, i) => i !== at && i < r.length - 2));
}

describe('the end of a resumed run', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // Some answers held back: rows finish out of order, and some are in flight at the stop.
    sb = await startTestSandbox({ rate: { workflow: null }, faults: { slow: 0.02 }, slowMs: 150, seed: 7 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('SIGTERM with rows in flight, the same command again: each row once, in row order, as an uninterrupted run', async () => {
    const dir = tempDir('bre-e2e-resume-end-');
    const input = locationCsv(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'off', '--concurrency', '64');
    const env = { ...sb.env(), BRE_ROW_GROUP_ROWS: String(CHUNK_ROWS) };
    // No grace: the calls in flight at the stop are abandoned, their rows left for the second session.
    const first = startCli([...args, '--stop-grace', '0'], env, { timeoutMs: 170_000 });
    await waitForLines(first, join(out, 'results.ndjson'), STOP_AFTER, 120_000);
    first.child.kill('SIGTERM');
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(3);
    const before = readOutput(out).results.map((l) => l.row);
    // The stopped session's end wrote results files and their index: the next end uses them.
    expect(existsSync(join(out, '.state', 'results-index.bin'))).toBe(true);
    expect(before.length).toBeLessThan(ROWS);
    // Rows were in flight: the first session's rows are not 1..n, so the second's fill gaps below its last.
    const top = Math.max(...before);
    expect(before.length).toBeLessThan(top);

    const second = await spawnCli(args, env, { timeoutMs: 170_000 });
    expect(second.code, second.stderr).toBe(0);
    const resumed = readOutput(out);
    expect(invariantProblems(ROWS, resumed)).toEqual([]);
    expect(resumed.summary.rows.resumed).toBe(before.length);
    const csvText = readFileSync(join(out, 'results.csv'), 'utf8');
    const records = parse(csvText, { from_line: 2 }) as string[][];
    const csvRows = records.map((r) => Number(r[0]));
    expect(csvRows).toEqual(range(ROWS));
    // Each row says the session that wrote it, the first's too, though the end copied their chunks as the first
    // end had written them: the run's id in every row, session 1 for the rows done before the stop, 2 for the rest.
    const runId = resumed.manifest.run_id as string;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    const firstRows = new Set(before);
    const sessionOf = (row: number) => (firstRows.has(row) ? '1' : '2');
    expect(records.filter((r) => r.at(-2) !== runId)).toEqual([]);
    expect(records.filter((r) => r.at(-1) !== sessionOf(Number(r[0]))).map((r) => r[0])).toEqual([]);
    expect(Number(resumed.summary.end_of_run.rows_copied), 'the end copied chunks').toBeGreaterThan(0);
    const a = await readParquet(join(out, 'results.parquet'));
    expect(a.rows.map((r) => Number(r.row))).toEqual(range(ROWS));
    await expectMatchesJournal(
      join(out, 'results.parquet'),
      join(out, 'results.ndjson'),
      csvText.split('\n')[0].split(','),
    );
    // The decisions of both sessions' rows are counted (the first's read from the journal at the end).
    const decisions = Object.values(resumed.summary.decisions as Record<string, Record<string, number>>)[0];
    expect(Object.values(decisions).reduce((a, b) => a + b, 0)).toBe(ROWS);

    // An uninterrupted run of the same input: the same files, but for the sandbox's request ids (a counter
    // of its own).
    const whole = join(dir, 'whole');
    const once = await spawnCli(runArgs('location', input, whole, '--rate', 'off', '--concurrency', '64'), env, {
      timeoutMs: 170_000,
    });
    expect(once.code, once.stderr).toBe(0);
    // Its row groups are the variable's size.
    expect(await parquetRowGroups(join(whole, 'results.parquet'))).toEqual(
      Array.from({ length: ROWS / CHUNK_ROWS }, () => CHUNK_ROWS),
    );
    const wholeText = readFileSync(join(whole, 'results.csv'), 'utf8');
    expect(csvText.split('\n')[0]).toBe(wholeText.split('\n')[0]);
    expect(withoutIds(parse(csvText) as string[][])).toEqual(withoutIds(parse(wholeText) as string[][]));
    const b = await readParquet(join(whole, 'results.parquet'));
    expect(a.columns).toEqual(b.columns);
    expect(a.types).toEqual(b.types);
    const ids = a.columns.filter((c) => c.endsWith('request_id'));
    expect(ids).toHaveLength(1);
    const strip = (rows: readonly Record<string, unknown>[]) =>
      rows.map((r) =>
        Object.fromEntries(Object.entries(r).filter(([k]) => k !== ids[0] && k !== 'run_id' && k !== 'run_session')),
      );
    expect(strip(a.rows)).toEqual(strip(b.rows));
    expect(readOutput(whole).summary.decisions).toEqual(resumed.summary.decisions);
  }, 300_000);
});
