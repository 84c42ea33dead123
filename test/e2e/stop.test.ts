/**
 * Stopping a run early (issue 5, point 3): refused credentials (401) and a refused IP (403) stop the whole
 * run at once with exit 3 and a message naming the service and what to check, without blaming the rows;
 * the circuit breaker stops a run against a service that only fails; SIGINT / SIGTERM abandon the calls
 * still in flight when the grace period ends. Every stop is resumable and the resumed run satisfies the
 * invariant. What is checked is what happened (calls made, calls abandoned unanswered), never how long it
 * took: a stop that waited would let a queued or hanging call finish, and that is what fails the test.
 * The stops are spawned CLIs (a signal, a deadline, the exit through main.ts); the resumes, whose folder is the
 * point, run the CLI's code in this process (runInProcess), without a CLI's start-up each.
 *
 * Every case has its sandbox (and proxy) of its own, so that no count is shared, and the cases run side by
 * side: they wait on a grace period, hanging calls, a back-off, not on the CPU.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { runArgs, spawnCli, startCli, waitForLines, type CliResult } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { startCountingProxy, type CountingProxy } from '../helpers/proxy.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const FAST = ['--rate', 'workflow=100/s'];
/**
 * One call a minute: every row after the first waits in the limiter for minutes, so a stop that waited for
 * the queue would not end within any test's time (the deadline below only turns that hang into a message).
 */
const CRAWL = ['--rate', 'workflow=1/min'];
const DEADLINE = { timeoutMs: 30_000 };

/** The case's own sandbox (`opts`, or one without a limit), closed when the case ends. */
async function sandboxFor(
  t: TestContext,
  opts: Parameters<typeof startTestSandbox>[0] = { rate: { workflow: null } },
): Promise<TestSandbox> {
  const sb = await startTestSandbox(opts);
  t.onTestFinished(() => sb.close());
  return sb;
}

/** The run ended by itself (exit 3), not by the test's deadline. */
function expectStoppedByItself(r: CliResult): void {
  expect(
    r.signal,
    `the run did not stop: it was still waiting (queued calls?) at the test's deadline\n${r.stderr}`,
  ).toBeNull();
  expect(r.code, r.stderr).toBe(3);
}

describe.concurrent('credentials or address refused', () => {
  it('401: exit 3 at once, names the service and the credentials, no row errors; then resumes', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir();
    const input = locationCsv(dir, 60);
    const out = join(dir, 'out');
    const before = sb.sandbox.stats().services.workflow.requests;
    // Rows queue in the limiter behind the first call: the stop must not wait for them.
    const refused = await spawnCli(
      runArgs('location', input, out, ...CRAWL),
      sb.env(undefined, { BRE_AUTH_TOKEN: 'tok-wrong-0000' }),
      DEADLINE,
    );
    expectStoppedByItself(refused);
    expect(refused.stderr).toMatch(/workflow service refused the credentials \(HTTP 401\)/);
    expect(refused.stderr).toMatch(/BRE_CLIENT_ID and BRE_AUTH_TOKEN/);
    expect(refused.stderr).toMatch(/re-run the same command to resume/);
    expect(refused.stderr).not.toContain('tok-wrong-0000');
    // At most the calls in flight were made (the first 401 stops the rest).
    expect(sb.sandbox.stats().services.workflow.requests - before).toBeLessThanOrEqual(10);
    const stopped = readOutput(out);
    expect(stopped.errors).toEqual([]);
    expect(stopped.results).toEqual([]);
    expect(stopped.summary.finished).toBe(false);
    expect(stopped.summary.stopped).toMatchObject({ code: 'AUTH_REFUSED', service: 'workflow', status: 401 });

    const resumed = await runInProcess(runArgs('location', input, out, ...FAST), sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(invariantProblems(60, readOutput(out))).toEqual([]);
  }, 60_000);

  it('403 (IP not on the allow-list): exit 3, says the egress IP must be allow-listed; then resumes', async (t) => {
    const sb = await sandboxFor(t);
    const closed = await startTestSandbox({ allow: ['10.0.0.0/8'], authToken: sb.token });
    const dir = tempDir();
    const input = locationCsv(dir, 40);
    const out = join(dir, 'out');
    try {
      const refused = await spawnCli(runArgs('location', input, out, ...CRAWL), closed.env(), DEADLINE);
      expectStoppedByItself(refused);
      expect(refused.stderr).toMatch(/workflow service refused this machine's IP address \(HTTP 403/);
      expect(refused.stderr).toMatch(/allow-listed/);
      expect(closed.sandbox.stats().services.workflow.requests).toBeLessThanOrEqual(10);
      const stopped = readOutput(out);
      expect(stopped.errors).toEqual([]);
      expect(stopped.summary.stopped).toMatchObject({ code: 'IP_NOT_ALLOWED', service: 'workflow', status: 403 });
    } finally {
      await closed.close();
    }
    const resumed = await runInProcess(runArgs('location', input, out, ...FAST), sb.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(invariantProblems(40, readOutput(out))).toEqual([]);
  }, 60_000);
});

describe.concurrent('circuit breaker', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, faults: { 503: 1 } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('a service answering only 503 stops the run after N consecutive row failures; --retry-errors then completes', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 500);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, ...FAST, '--max-attempts', '2', '--max-consecutive-failures', '10');
    const down = await spawnCli(args, sb.env());
    expect(down.code, down.stderr).toBe(3);
    expect(down.stderr).toMatch(
      /workflow service is failing: \d+ consecutive calls failed after all retries \(last: SERVER_UNAVAILABLE\)/,
    );
    expect(down.stderr).toMatch(/re-run the same command/);
    const stopped = readOutput(out);
    expect(stopped.results).toEqual([]);
    expect(stopped.errors.length).toBeGreaterThanOrEqual(10);
    expect(stopped.errors.length).toBeLessThan(100);
    expect(stopped.errors.every((e) => e.code === 'SERVER_UNAVAILABLE' && e.status === 503 && e.attempts === 2)).toBe(
      true,
    );
    expect(stopped.summary.stopped).toMatchObject({ code: 'CIRCUIT_OPEN', service: 'workflow' });
    console.info(
      `circuit: stopped with ${stopped.errors.length} of 500 rows in errors, ${sb.sandbox.stats().services.workflow.requests} calls`,
    );

    sb.sandbox.setFaults({});
    const retry = await runInProcess([...args, '--retry-errors'], sb.env());
    expect(retry.code, retry.stderr).toBe(0);
    const done = readOutput(out);
    expect(invariantProblems(500, done)).toEqual([]);
    expect(done.results).toHaveLength(500);
    expect(done.summary.rows.retried_from_errors).toBe(stopped.errors.length);
  }, 90_000);
});

describe.concurrent('circuit breaker on the failure share', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: null }, faults: { 503: 0.95 }, seed: 3 });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('with the consecutive count off, a failure share above 80% of the last 200 rows stops the run', async () => {
    const dir = tempDir();
    const input = locationCsv(dir, 1000);
    const out = join(dir, 'out');
    const run = await spawnCli(
      runArgs(
        'location',
        input,
        out,
        '--rate',
        'workflow=500/s',
        '--max-attempts',
        '1',
        '--max-consecutive-failures',
        '0',
      ),
      sb.env(),
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/workflow service is failing: \d+ of the last 200 calls failed after all retries/);
    const stopped = readOutput(out);
    expect(stopped.results.length + stopped.errors.length).toBeGreaterThanOrEqual(200);
    expect(stopped.results.length + stopped.errors.length).toBeLessThan(600);
  }, 60_000);
});

describe.concurrent('signals', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    // Where the stopped runs resume: nothing is counted there.
    sb = await startTestSandbox({ rate: { workflow: null } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  /**
   * The case's own sandbox where half the calls hang for 20 s, longer than the grace periods below but for the
   * 30 s one, and the proxy in front that counts the calls the CLI gave up on before their answer came.
   */
  async function hungFor(t: TestContext): Promise<{ hung: TestSandbox; proxy: CountingProxy }> {
    const hung = await sandboxFor(t, { rate: { workflow: null }, faults: { slow: 0.5 }, slowMs: 20_000 });
    const proxy = await startCountingProxy(hung.sandbox.url);
    t.onTestFinished(() => proxy.close());
    return { hung, proxy };
  }

  /** Waits until `n` more calls than now hang in `hung` (right after an answer the next call may not have started). */
  async function untilHanging(hung: TestSandbox, n: number): Promise<void> {
    const before = hung.sandbox.stats().services.workflow.faults.slow;
    await waitFor(() => hung.sandbox.stats().services.workflow.faults.slow >= before + n, 10_000, `${n} calls to hang`);
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: stops taking rows, abandons calls past --stop-grace, exit 3, resumable`, async (t) => {
      const { hung, proxy } = await hungFor(t);
      const dir = tempDir();
      const rows = 80;
      const input = locationCsv(dir, rows);
      const out = join(dir, 'out');
      const args = runArgs(
        'location',
        input,
        out,
        '--rate',
        'workflow=20/s',
        '--concurrency',
        '40',
        '--stop-grace',
        '1s',
      );
      const run = startCli(args, hung.env(proxy.url));
      await waitForLines(run, join(out, 'results.ndjson'), 10);
      await untilHanging(hung, 2);
      const abandonedBefore = proxy.counts.abandoned;
      run.child.kill(signal);
      const res = await run.done;
      expect(res.code, res.stderr).toBe(3);
      expect(res.stderr).toContain(`${signal} received`);
      // The hanging calls were given up when the 1 s grace ended; had the run waited for them, they would
      // have been answered after 20 s and none abandoned.
      expect(proxy.counts.abandoned - abandonedBefore).toBeGreaterThanOrEqual(1);
      const stopped = readOutput(out);
      expect(stopped.errors).toEqual([]);
      expect(stopped.results.length).toBeLessThan(rows);
      expect(stopped.summary.stopped).toMatchObject({ code: 'INTERRUPTED' });
      console.info(
        `${signal}: ${stopped.results.length} rows done, ${proxy.counts.abandoned - abandonedBefore} calls abandoned`,
      );

      const resumed = await runInProcess(
        runArgs('location', input, out, '--rate', 'workflow=50/s', '--concurrency', '200'),
        sb.env(),
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      const after = readOutput(out);
      expect(invariantProblems(rows, after)).toEqual([]);
      expect(after.summary.rows.resumed).toBe(stopped.results.length);
    }, 60_000);
  }

  it('a SIGTERM while the run opens (its sandbox just started, its folder not yet) stops it the same way: exit 3, resumable', async () => {
    const dir = tempDir();
    const rows = 30;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, ...FAST);
    // The built-in sandbox (no BRE_BASE_URL): it starts inside the opening, after the input, before the
    // folder, the limiters and the monitor. Before the handlers came first, the signal fell between and Node's
    // default ended the process (no exit code, its lock and a job's chunk left held).
    const run = startCli(args, {});
    await waitFor(() => run.stderr().includes('using the built-in sandbox'), 30_000, 'the sandbox to start');
    run.child.kill('SIGTERM');
    const res = await run.done;
    expect(res.signal, res.stderr).toBeNull();
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain('SIGTERM received');
    const resumed = await runInProcess(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(invariantProblems(rows, readOutput(out))).toEqual([]);
  }, 60_000);

  it('a second signal abandons the calls in flight at once', async (t) => {
    const { hung, proxy } = await hungFor(t);
    const dir = tempDir();
    const input = locationCsv(dir, 60);
    const out = join(dir, 'out');
    // A grace longer than the hang: after the first signal alone the hanging calls would be answered.
    const run = startCli(
      runArgs('location', input, out, '--rate', 'workflow=20/s', '--stop-grace', '30s'),
      hung.env(proxy.url),
    );
    await waitForLines(run, join(out, 'results.ndjson'), 5);
    await untilHanging(hung, 2);
    const abandonedBefore = proxy.counts.abandoned;
    run.child.kill('SIGINT');
    await waitFor(() => run.stderr().includes('SIGINT received'), 5000, 'the first signal to be seen');
    run.child.kill('SIGINT');
    const res = await run.done;
    expect(res.code, res.stderr).toBe(3);
    expect(proxy.counts.abandoned - abandonedBefore).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
