/**
 * `--retry-errors` (issue 5, point 2): only the rows of the errors file run again; those that succeed move
 * from errors to results, the others stay in errors with their latest error; a retry killed mid-way resumes.
 * The folder is the point: the runs are the CLI's code in this process (runInProcess, without a CLI's start-up
 * each); the killed retries and the one usage error (exit 2 through main.ts) are spawned CLIs.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

describe('--retry-errors', () => {
  let sb: TestSandbox;
  let proxy: CountingProxy;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, seed: 7 });
    proxy = await startCountingProxy(sb.sandbox.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await sb?.close();
  });
  beforeEach(() => proxy.reset());

  it('moves rows that now succeed from errors to results; the others keep their latest error', async () => {
    const dir = tempDir();
    const rows = 200;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=200/s', '--max-attempts', '1');

    sb.sandbox.setFaults({ 503: 0.3 });
    const first = await runInProcess(args, sb.env(proxy.url));
    expect(first.code, first.stderr).toBe(1);
    const failed = readOutput(out);
    expect(invariantProblems(rows, failed)).toEqual([]);
    expect(failed.errors.length).toBeGreaterThan(20);
    expect(failed.errors.every((e) => e.code === 'SERVER_UNAVAILABLE')).toBe(true);
    const failedRows = new Set(failed.errors.map((e) => e.row));

    // Half-way retry: now a different failure, so "latest error" is visible.
    sb.sandbox.setFaults({ malformed: 0.4 });
    const requestsBefore = proxy.counts.requests;
    const second = await runInProcess([...args, '--retry-errors'], sb.env(proxy.url));
    expect(second.code, second.stderr).toBe(1);
    // Only the rows of the errors file were sent.
    expect(proxy.counts.requests - requestsBefore).toBe(failedRows.size);
    const mid = readOutput(out);
    expect(invariantProblems(rows, mid)).toEqual([]);
    expect(mid.errors.length).toBeLessThan(failedRows.size);
    expect(mid.errors.every((e) => failedRows.has(e.row))).toBe(true);
    expect(mid.errors.every((e) => e.code === 'BAD_RESPONSE' && e.status === 200 && e.attempts === 1)).toBe(true);
    expect(mid.summary.rows.retried_from_errors).toBe(failedRows.size);
    expect(mid.summary.rows.resumed).toBe(rows - failedRows.size);
    expect(existsSync(join(out, 'errors.retrying.ndjson'))).toBe(false);

    sb.sandbox.setFaults({});
    const third = await runInProcess([...args, '--retry-errors'], sb.env(proxy.url));
    expect(third.code, third.stderr).toBe(0);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(done.errors).toEqual([]);
    expect(done.results).toHaveLength(rows);
    // No row that had succeeded was ever sent again.
    expect(proxy.repeated().size).toBe(0);
  }, 90_000);

  it('a retry killed mid-way (torn errors line included) resumes with the same command', async () => {
    const dir = tempDir();
    const rows = 300;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=200/s', '--max-attempts', '1');
    sb.sandbox.setFaults({ 503: 0.5 });
    const first = await runInProcess(args, sb.env(proxy.url));
    expect(first.code, first.stderr).toBe(1);
    const failedCount = readOutput(out).errors.length;
    expect(failedCount).toBeGreaterThan(100);

    // The retry runs slowly (20/s) so that the kill lands mid-way.
    sb.sandbox.setFaults({ 503: 0.2 });
    const retryArgs = [...args, '--retry-errors', '--rate', 'workflow=20/s'];
    const retry = startCli(retryArgs, sb.env(proxy.url));
    await waitForLines(retry, join(out, 'results.ndjson'), rows - failedCount + 20);
    retry.child.kill('SIGKILL');
    await retry.done;
    expect(existsSync(join(out, 'errors.retrying.ndjson'))).toBe(true);
    appendFileSync(join(out, 'errors.ndjson'), '{"row":1,"key":"LOC-0000');

    sb.sandbox.setFaults({});
    const resumed = await runInProcess([...args, '--retry-errors'], sb.env(proxy.url));
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(done.errors).toEqual([]);
    expect(existsSync(join(out, 'errors.retrying.ndjson'))).toBe(false);
    const repeated = proxy.repeated();
    console.info(`retry killed: ${repeated.size} successful calls repeated after the kill`);
    expect(repeated.size).toBeLessThanOrEqual(16);
  }, 90_000);

  it('a plain resume after a killed retry finishes it too', async () => {
    const dir = tempDir();
    const rows = 150;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, '--rate', 'workflow=200/s', '--max-attempts', '1');
    sb.sandbox.setFaults({ 503: 0.6 });
    expect((await runInProcess(args, sb.env())).code).toBe(1);
    const failedCount = readOutput(out).errors.length;
    sb.sandbox.setFaults({});
    const retry = startCli([...args, '--retry-errors', '--rate', 'workflow=20/s'], sb.env());
    await waitForLines(retry, join(out, 'results.ndjson'), rows - failedCount + 10);
    retry.child.kill('SIGKILL');
    await retry.done;
    const resumed = await runInProcess(args, sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(done.errors).toEqual([]);
    expect(existsSync(join(out, 'errors.retrying.ndjson'))).toBe(false);
  }, 60_000);

  it('--retry-errors without an earlier run is a usage error (exit 2)', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 3);
    const res = await spawnCli(runArgs('location', input, join(dir, 'nothing-here'), '--retry-errors'), sb.env());
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--retry-errors needs the --out folder of an earlier run/);
  });
});
