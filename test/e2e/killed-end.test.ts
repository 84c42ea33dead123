/**
 * The end after a real `kill -9` (src/output/spool/records.ts): the killed session's spool recorded its chunks
 * as it wrote them, and the resumed run's end copies them instead of encoding those rows again. Its files are
 * those an uninterrupted run's end makes of the same journal (every row once, in row order, the same values;
 * the in-process tests, test/output/spool/records.test.ts, hold the same for torn records and spoiled bytes).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli, startCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { buildResultsCsv } from '../output/two-pass-csv.js';
import { expectMatchesJournal, parquetRowGroups } from '../output/parquet-reader.js';
import { workflowResultColumns } from '../../src/normalise/workflow.js';

/**
 * Chunks of 1,000 rows (BRE_ROW_GROUP_ROWS, a tenth of the spool's 10,000): the same boundaries crossed by
 * fewer rows (the two runs of them are most of this file's CPU).
 */
const CHUNK_ROWS = 1000;
/**
 * Enough for the killed session to write a chunk past its reorder buffer (4,096 rows) and the 256 KB of lines
 * before its spool starts (about 5,500 rows), with time to spare before the run would end.
 */
const ROWS = 10_000;

/** The records file of the killed session's spool, once it lists a chunk (a record holds a row group's metadata). */
function recordedChunk(out: string): boolean {
  const state = join(out, '.state');
  try {
    return readdirSync(state).some((f) => f.endsWith('.records') && statSync(join(state, f)).size > 4096);
  } catch {
    return false;
  }
}

describe('the end after a kill -9', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it("copies the killed session's recorded chunks: the files an uninterrupted run makes", async () => {
    const dir = tempDir();
    const input = locationCsv(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'off', '--concurrency', '32');
    const env = { ...sb.env(), BRE_ROW_GROUP_ROWS: String(CHUNK_ROWS) };
    const first = startCli(args, env);
    await waitFor(() => recordedChunk(out) || first.child.exitCode !== null, 300_000, 'a chunk recorded');
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    const second = await spawnCli(args, env);
    expect(second.code, second.stderr).toBe(0);
    const after = readOutput(out);
    expect(invariantProblems(ROWS, after)).toEqual([]);
    // At least the killed session's first chunk was used as it was written.
    expect(after.summary.end_of_run?.rows_copied).toBeGreaterThanOrEqual(CHUNK_ROWS);
    // The chunks, copied or encoded, are row groups of at most the variable's rows.
    const groups = await parquetRowGroups(join(out, 'results.parquet'));
    expect(groups.filter((n) => n > CHUNK_ROWS)).toEqual([]);
    expect(groups.reduce((a, b) => a + b, 0)).toBe(ROWS);
    // Each row's decision counted once: the killed session's by its chunks' records or its lines, this one's live.
    const counted: Record<string, number> = {};
    for (const l of after.results) {
      const d = String((l.stages as { location: { decision?: unknown } }).location.decision);
      counted[d] = (counted[d] ?? 0) + 1;
    }
    expect(after.summary.decisions.location).toEqual(counted);
    await buildResultsCsv(join(out, 'results.ndjson'), join(dir, 'two-pass.csv'), [
      { id: 'location', known: workflowResultColumns().map((f) => f.name) },
    ]);
    expect(readFileSync(join(out, 'results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'two-pass.csv'), 'utf8'));
    await expectMatchesJournal(join(out, 'results.parquet'), join(out, 'results.ndjson'), after.csvLines[0].split(','));
    expect(readdirSync(join(out, '.state')).filter((f) => f.startsWith('spool-'))).toEqual([]);

    // Two runs of 10,000 rows (one killed) with --rate off: about 50 s at load 25 on 2 cores, more with a
    // benchmark beside it.
  }, 480_000);
});
