/**
 * Spend (--price, --max-spend) against the sandbox, which counts the calls it bills itself (a 2xx or a 5xx
 * answer it decided on: packages/sandbox/src/stats.ts `billed`): the spend in summary.json, the time series, the
 * metrics and report.html is that count times the price, with 5% of calls answered 503 (billed, then retried). A cap at
 * a third of the night stops the run (exit 3, nothing in errors for it); --plan then estimates the rest within
 * 10%, and the resume with a higher cap finishes every row once. A run killed with -9 leaves a count at least
 * what the sandbox billed it, above it by at most the spend file's reserve and the calls out. The runs whose
 * folder, summary or closing lines are the point are the CLI's code in this process (runInProcess); the capped
 * stop (exit 3) and the killed run are spawned CLIs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runArgs, spawnCli, startCli, waitForLines } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { RESERVE_ATTEMPTS } from '../../src/output/spend-file.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const PRICE = 0.05;
const priced = ['--price', `workflow=${PRICE}`, '--currency', 'EUR', '--rate', 'workflow=off', '--concurrency', '8'];

describe('spend', () => {
  let sb: TestSandbox;
  const billed = () => sb.sandbox.stats().services.workflow.billed;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, faults: { 503: 0.05 }, seed: 41 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it("summary, time series, metrics and report say the sandbox's billed calls times the price", async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 150);
    const out = join(dir, 'out');
    const metrics = join(dir, 'bre.prom');
    const before = billed();
    const res = await runInProcess(runArgs('location', input, out, ...priced, '--metrics-file', metrics), sb.env());
    expect(res.code, res.stderr).toBe(0);
    const calls = billed() - before;
    expect(sb.sandbox.stats().services.workflow.faults['503']).toBeGreaterThan(0);
    expect(calls).toBeGreaterThan(150);
    const spend = readOutput(out).summary.spend;
    expect(spend.services.workflow.calls_billed).toBe(calls);
    expect(spend.total).toBeCloseTo(calls * PRICE, 6);
    expect(spend.this_session).toBeCloseTo(calls * PRICE, 6);
    expect(spend.currency).toBe('EUR');
    expect(res.stdout).toContain(`spend: ${(calls * PRICE).toFixed(2)} EUR in all`);

    const samples = readFileSync(join(out, '.state', 'timeline.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.kind === 'sample');
    expect(samples.at(-1).spend.total).toBeCloseTo(calls * PRICE, 6);
    const added = samples.reduce((a: number, l: { spend: { interval: number } }) => a + l.spend.interval, 0);
    expect(added).toBeCloseTo(calls * PRICE, 6);

    const prom = readFileSync(metrics, 'utf8');
    const m = /^bre_batch_spend_total\{[^}]*service="workflow"[^}]*\} (\S+)$/m.exec(prom);
    expect(Number(m?.[1])).toBeCloseTo(calls * PRICE, 6);

    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain(`${(calls * PRICE).toFixed(2)} EUR`);
    // The report's spend table: the service's row says the sandbox's count and its price.
    expect(report).toContain(
      `<td>workflow</td><td class="n">${calls.toLocaleString('en-US')}</td><td class="n">${(calls * PRICE).toFixed(2)} EUR</td>`,
    );
  }, 180_000);

  it('--max-spend at a third of the night stops with exit 3; --plan estimates the rest; a higher cap finishes it', async () => {
    const dir = tempDir();
    const rows = 240;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const cap = (rows * PRICE) / 3;
    const start = billed();
    const faults = () => sb.sandbox.stats().services.workflow.faults['503'] ?? 0;
    const faultsBefore = faults();
    const metrics = join(dir, 'capped.prom');
    const first = await spawnCli(
      runArgs('location', input, out, ...priced, '--max-spend', String(cap), '--metrics-file', metrics),
      sb.env(),
    );
    expect(first.code, first.stderr).toBe(3);
    const stopped = readOutput(out);
    expect(stopped.summary.stopped.code).toBe('SPEND_CAP');
    expect(stopped.errors).toEqual([]);
    const spent = stopped.summary.spend.total;
    expect(spent).toBeCloseTo((billed() - start) * PRICE, 6);
    // Rows start only while they fit; the rows in flight (at most --concurrency) may only add their retries.
    expect(spent).toBeGreaterThan(cap / 2);
    expect(spent).toBeLessThanOrEqual(cap + 8 * PRICE * 6);
    // Every row was counted at its price before it started, so what passes the cap is only retries: each after
    // a 503 the sandbox answered (billed itself) to a row in flight. At most those, never a row started over it.
    expect(spent - cap).toBeLessThanOrEqual((faults() - faultsBefore) * PRICE + 1e-9);
    // The metrics say the spend and the cap.
    const prom = readFileSync(metrics, 'utf8');
    expect(Number(/^bre_batch_spend_total\{[^}]*service="workflow"[^}]*\} (\S+)$/m.exec(prom)?.[1])).toBeCloseTo(
      spent,
      6,
    );
    expect(Number(/^bre_batch_spend_cap\{[^}]*currency="EUR"[^}]*\} (\S+)$/m.exec(prom)?.[1])).toBe(cap);
    expect(first.stderr).toMatch(/stopping at --max-spend 4\.00 EUR/);

    const plan = await runInProcess(runArgs('location', input, out, ...priced, '--plan'), sb.env());
    expect(plan.code, plan.stderr).toBe(0);
    const estimate = Number(/spend: about (\d+\.\d+) EUR/.exec(plan.stdout)?.[1]);
    expect(plan.stdout).toMatch(/retry share of the folder's 1 earlier session/);

    const mid = billed();
    const second = await runInProcess(runArgs('location', input, out, ...priced, '--max-spend', '100'), sb.env());
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/this folder's earlier sessions spent \d+\.\d+ EUR .*--max-spend 100\.00 EUR leaves/);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(done.summary.spend.this_session).toBeCloseTo((billed() - mid) * PRICE, 6);
    expect(done.summary.spend.total).toBeCloseTo((billed() - start) * PRICE, 6);
    expect(Math.abs(estimate - done.summary.spend.this_session) / done.summary.spend.this_session).toBeLessThan(0.1);
  }, 240_000);

  it('a kill -9 mid-run: the folder counts at least what the sandbox billed, at most the reserve and the calls out above it; the resume finishes each row once', async () => {
    const dir = tempDir();
    const rows = 400;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const start = billed();
    const args = runArgs(
      'location',
      input,
      out,
      ...priced.slice(0, 4),
      '--rate',
      'workflow=80/s',
      '--concurrency',
      '8',
    );
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 100);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const second = await runInProcess(args, sb.env());
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/this folder's earlier sessions spent \d+\.\d+ EUR/);
    const done = readOutput(out);
    expect(invariantProblems(rows, done)).toEqual([]);
    expect(done.summary.rows.resumed).toBeGreaterThanOrEqual(100);
    // Both sessions, as the sandbox billed them (calls the killed one had out are billed when answered).
    const sandbox = (billed() - start) * PRICE;
    expect(done.summary.spend.total).toBeGreaterThanOrEqual(sandbox - 1e-9);
    expect(done.summary.spend.total).toBeLessThanOrEqual(sandbox + (RESERVE_ATTEMPTS + 8) * PRICE + 1e-9);
  }, 180_000);
});
