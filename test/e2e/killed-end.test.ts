/**
 * The end after a real `kill -9` (src/output/spool/records.ts): the killed session's spool recorded its chunks
 * as it wrote them, and the resumed run's end copies them instead of encoding those rows again. Its files are
 * those of an uninterrupted run: the same rows in the same order with the same values (but the sandbox's
 * request ids, new for every call), and those its own journal gives.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli, startCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { buildResultsCsv } from '../output/two-pass-csv.js';
import { expectMatchesJournal } from '../output/parquet-reader.js';
import { workflowResultColumns } from '../../src/normalise/workflow.js';

/**
 * Enough for the killed session to write a chunk of 10,000 rows past its reorder buffer (4,096 rows) and
 * the 256 KB of lines before its spool starts, with time to spare before the run would end.
 */
const ROWS = 20_000;

/** The records file of the killed session's spool, once it lists a chunk (a record holds a row group's metadata). */
function recordedChunk(out: string): boolean {
  const state = join(out, '.state');
  try {
    return readdirSync(state).some((f) => f.endsWith('.records') && statSync(join(state, f)).size > 4096);
  } catch {
    return false;
  }
}

/** results.csv with the request ids left out (each call's own). */
function withoutRequestIds(path: string): string[][] {
  const [header, ...rows] = parse(readFileSync(path, 'utf8')) as string[][];
  const at = header.indexOf('location.request_id');
  expect(at).toBeGreaterThan(0);
  return [header, ...rows.map((r) => r.toSpliced(at, 1))];
}

describe('the end after a kill -9', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it("copies the killed session's recorded chunks: the files of an uninterrupted run", async () => {
    const dir = tempDir();
    const input = locationCsv(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'off', '--concurrency', '32');
    const first = startCli(args, sb.env());
    await waitFor(() => recordedChunk(out) || first.child.exitCode !== null, 120_000, 'a chunk recorded');
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    const second = await spawnCli(args, sb.env());
    expect(second.code, second.stderr).toBe(0);
    const after = readOutput(out);
    expect(invariantProblems(ROWS, after)).toEqual([]);
    // At least the killed session's first chunk was used as it was written.
    expect(after.summary.end_of_run?.rows_copied).toBeGreaterThanOrEqual(10_000);
    expect(Object.values(after.summary.decisions.location as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(
      ROWS,
    );
    await buildResultsCsv(join(out, 'results.ndjson'), join(dir, 'two-pass.csv'), [
      { id: 'location', known: workflowResultColumns() },
    ]);
    expect(readFileSync(join(out, 'results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'two-pass.csv'), 'utf8'));
    await expectMatchesJournal(join(out, 'results.parquet'), join(out, 'results.ndjson'), after.csvLines[0].split(','));
    expect(readdirSync(join(out, '.state')).filter((f) => f.startsWith('spool-'))).toEqual([]);

    const whole = join(dir, 'whole');
    const clean = await spawnCli(runArgs('location', input, whole, '--rate', 'off', '--concurrency', '32'), sb.env());
    expect(clean.code, clean.stderr).toBe(0);
    expect(withoutRequestIds(join(out, 'results.csv'))).toEqual(withoutRequestIds(join(whole, 'results.csv')));
    expect(after.summary.decisions).toEqual(readOutput(whole).summary.decisions);
    // Three runs of 20,000 rows (one killed): tens of seconds on a loaded machine.
  }, 240_000);
});
