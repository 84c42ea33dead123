/**
 * Crash-safe progress (issue 5, point 1): a real `kill -9` of a running `bre-batch run`, a torn trailing
 * line, and a resume with the same command: every row once, no successful call repeated beyond the calls
 * in flight at the kill, results.csv and summary.json rebuilt. A different input or pipeline under the same
 * --out is refused.
 *
 * Each case has its sandbox and counting proxy of its own and the cases run side by side: they wait on the
 * sandbox's latency and a pace. The kills, the full disk (a file size limit), the second run on a locked folder
 * and each case's first refusal are spawned CLIs (what only a process shows, and the exit through main.ts);
 * the resumes and the other refusals, whose folder or message is the point, run the CLI's code in this process
 * (runInProcess), without a CLI's start-up each.
 */
import { appendFileSync, copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { ROOT, runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, locationKey, readOutput } from '../helpers/output.js';
import { locationParquet } from '../helpers/location-parquet.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { buildResultsCsv } from '../output/two-pass-csv.js';
import { workflowResultColumns } from '../../src/normalise/workflow.js';
import { expectMatchesJournal } from '../output/parquet-reader.js';

/** Past the kill at the 80th line by as many again (as past the ~60 rows a full disk lets through). */
const ROWS = 160;
const CONCURRENCY = 8;

/** The case's own sandbox and the proxy counting its calls, closed when the case ends. */
async function servedFor(t: TestContext): Promise<{ sb: TestSandbox; proxy: CountingProxy }> {
  // Latency keeps several calls in flight at any moment, so the kill lands on some of them.
  const sb = await startTestSandbox({ rate: { workflow: null }, latencyMs: 150 });
  t.onTestFinished(() => sb.close());
  const proxy = await startCountingProxy(sb.sandbox.url);
  t.onTestFinished(() => proxy.close());
  return { sb, proxy };
}

describe.concurrent('kill -9 and resume', () => {
  // Parquet rows are numbered in the file's order, so a Parquet input resumes exactly as a CSV does.
  it.for<[string, (dir: string, n: number) => string]>([
    ['CSV', locationCsv],
    ['Parquet', locationParquet],
  ])(
    '%s: resumes after SIGKILL and a torn line: every row once, no success repeated beyond those in flight',
    { timeout: 90_000 },
    async ([_format, write], t) => {
      const { sb, proxy } = await servedFor(t);
      const dir = tempDir();
      const input = write(dir, ROWS);
      const out = join(dir, 'out');
      // 50/s over 160 rows: about 3 s, so the kill (at the 80th line) lands mid-way.
      const args = runArgs('location', input, out, '--rate', 'workflow=50/s', '--concurrency', String(CONCURRENCY));
      const first = startCli(args, sb.env(proxy.url));
      await waitForLines(first, join(out, 'results.ndjson'), 80);
      first.child.kill('SIGKILL');
      const inflightAtKill = proxy.inflight();
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      // The killed run's lock is left behind; the resume takes it over (its process is gone).
      expect(existsSync(join(out, '.state', 'lock'))).toBe(true);

      const beforeResume = readOutput(out);
      const doneBefore = beforeResume.results.length + beforeResume.errors.length;
      expect(doneBefore).toBeGreaterThanOrEqual(80);
      expect(doneBefore).toBeLessThan(ROWS);
      // A torn write: half a line for a row that is not done, without its newline.
      const doneRows = new Set(beforeResume.results.map((l) => l.row));
      let torn = 1;
      while (doneRows.has(torn)) torn += 1;
      appendFileSync(
        join(out, 'results.ndjson'),
        `{"row":${torn},"key":"LOC-${String(torn).padStart(6, '0')}","stages":{"loc`,
      );

      const second = await runInProcess(args, sb.env(proxy.url));
      expect(second.code, second.stderr).toBe(0);
      const after = readOutput(out);
      expect(invariantProblems(ROWS, after)).toEqual([]);
      expect(after.results).toHaveLength(ROWS);
      expect(after.summary.rows.resumed).toBe(doneBefore);
      // each row's decision counted once: the killed session's from the journal, this one's as they came
      expect(Object.values(after.summary.decisions.location as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(
        ROWS,
      );
      expect(after.summary.rows.processed_this_session).toBe(ROWS - doneBefore);
      expect(after.summary.finished).toBe(true);
      expect(after.csvLines).toHaveLength(ROWS + 1);
      // Each result line is whole JSON with its stage result (the torn fragment is gone), under its own row.
      expect(after.results.every((l) => typeof (l.stages as any)?.location?.decision === 'string')).toBe(true);
      expect(after.results.every((l) => l.key === locationKey(l.row))).toBe(true);
      // results.csv is what a rebuild of the final journal gives (the header of an uninterrupted run), and
      // results.parquet holds every value of the journal under the same columns (read back with parquet-wasm).
      await buildResultsCsv(join(out, 'results.ndjson'), join(dir, 'two-pass.csv'), [
        { id: 'location', known: workflowResultColumns().map((f) => f.name) },
      ]);
      expect(readFileSync(join(out, 'results.csv'), 'utf8')).toBe(readFileSync(join(dir, 'two-pass.csv'), 'utf8'));
      await expectMatchesJournal(
        join(out, 'results.parquet'),
        join(out, 'results.ndjson'),
        after.csvLines[0].split(','),
      );

      // Every row answered successfully at least once; repeats only for calls answered but not journalled.
      expect(proxy.successes.size).toBe(ROWS);
      const repeated = proxy.repeated();
      console.info(
        `kill -9: ${doneBefore} rows done at the kill, ${inflightAtKill} calls in flight at the proxy, ${repeated.size} successful calls repeated on resume`,
      );
      expect(repeated.size).toBeLessThanOrEqual(CONCURRENCY);
      expect([...repeated.values()].every((n) => n === 2)).toBe(true);
    },
  );

  it('a full disk (a write fails) stops with exit 3; the same command resumes and completes', async (t) => {
    const { sb, proxy } = await servedFor(t);
    const dir = tempDir();
    const input = locationCsv(dir, ROWS);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=200/s', '--concurrency', String(CONCURRENCY));
    // results.ndjson lines are ~650 bytes: 40 KiB fill up after about 60 rows.
    const full = await spawnCli(args, sb.env(proxy.url), { fileSizeLimitKb: 40 });
    expect(full.code, full.stderr).toBe(3);
    expect(full.stderr).toMatch(/cannot write to .*EFBIG/);
    expect(full.stderr).toMatch(/re-run the same command to resume/);
    const stopped = readOutput(out);
    expect(stopped.results.length).toBeGreaterThan(10);
    expect(stopped.results.length).toBeLessThan(ROWS);
    expect(stopped.summary.stopped.code).toBe('OUTPUT_UNWRITABLE');

    const resumed = await runInProcess(args, sb.env(proxy.url));
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = readOutput(out);
    expect(invariantProblems(ROWS, after)).toEqual([]);
    const repeated = proxy.repeated();
    console.info(
      `disk full: ${stopped.results.length} rows kept, ${repeated.size} successful calls repeated on resume`,
    );
    // Re-sent: the rows of the batch whose write failed (settled in one event-loop turn, each of them one
    // of the calls in flight) and the calls in flight that finished after it.
    expect(repeated.size).toBeLessThanOrEqual(2 * CONCURRENCY);
  }, 60_000);

  it('a second run on the same --out while the first is running is refused (exit 2); the first is unharmed', async (t) => {
    const { sb } = await servedFor(t);
    const dir = tempDir();
    const input = locationCsv(dir, 150);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=50/s', '--concurrency', String(CONCURRENCY));
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 10);
    // The first held still while the second tries (alive, its lock held): however slowly the second starts,
    // the first cannot have finished in between.
    first.child.kill('SIGSTOP');
    let second: Awaited<ReturnType<typeof spawnCli>>;
    try {
      second = await spawnCli(args, sb.env());
    } finally {
      first.child.kill('SIGCONT');
    }
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`another bre-batch run \\(pid ${first.child.pid},`));
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(invariantProblems(150, readOutput(out))).toEqual([]);
    expect(existsSync(join(out, '.state', 'lock'))).toBe(false);
  }, 60_000);

  it('refuses to resume with another input or another pipeline under the same --out (exit 2)', async (t) => {
    const { sb } = await servedFor(t);
    const dir = tempDir();
    const input = locationCsv(dir, 5);
    const out = join(dir, 'out');
    const ok = await runInProcess(runArgs('location', input, out), sb.env());
    expect(ok.code, ok.stderr).toBe(0);

    const other = locationCsv(dir, 6, 'other.csv');
    const byInput = await spawnCli(runArgs('location', other, out), sb.env());
    expect(byInput.code).toBe(2);
    expect(byInput.stderr).toMatch(/refusing to resume/);
    expect(byInput.stderr).toMatch(/input/);

    const pipeline = join(dir, 'my-location.yaml');
    writeFileSync(
      pipeline,
      readFileSync(join(ROOT, 'pipelines', 'location.yaml'), 'utf8').replace('id: location', 'id: geo'),
    );
    const byPipeline = await runInProcess(runArgs(pipeline, input, out), sb.env());
    expect(byPipeline.code).toBe(2);
    expect(byPipeline.stderr).toMatch(/refusing to resume/);
    expect(byPipeline.stderr).toMatch(/pipeline/);

    // The same bytes read otherwise would be other values: another encoding or --decimal-comma is refused.
    for (const extra of [['--encoding', 'windows-1252'], ['--decimal-comma']]) {
      const byReading = await runInProcess(runArgs('location', input, out, ...extra), sb.env());
      expect(byReading.code).toBe(2);
      expect(byReading.stderr).toMatch(
        /refusing to resume .*its input was read with encoding utf-8, separator ',' \(comma\), no --decimal-comma, now with/,
      );
    }
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).input.reading).toEqual({
      encoding: 'utf-8',
      delimiter: ',',
      decimal_comma: false,
    });

    // The same contents under another path is the same input: the run resumes (nothing left to do).
    const copy = join(dir, 'copy.csv');
    copyFileSync(input, copy);
    const same = await runInProcess(runArgs('location', copy, out), sb.env());
    expect(same.code, same.stderr).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(5, folder)).toEqual([]);
    expect(folder.summary.rows.resumed).toBe(5);
  }, 60_000);
});
