/**
 * Several egress addresses from one process (issue 17): `run --local-address 127.0.0.2,127.0.0.3,127.0.0.4`
 * against a sandbox whose strict sliding window is per caller address. Linux routes all of 127.0.0.0/8 to
 * the loopback interface, so these are real, distinct source addresses here and in CI. Checked from the
 * sandbox's own counts per caller: every address used, none over its limit in any window, no 429; the
 * results those of a one-address run; an address that is not on the machine refused before anything is
 * written; an address whose network goes away mid-run has its rows moved; kill -9 and resume, and
 * --retry-errors, with several addresses; one Redis budget per address; --plan counting the addresses.
 *
 * The path bound is raised with --rate-slack, as in rate-limit.test.ts: a loaded machine (a sandbox in this
 * process, stalled) must not decide the outcome at a 1 s window.
 *
 * The cases that measure a pace against the limits (three addresses in every window; two workers through
 * Redis) run on their own, one after the other. The others each have a sandbox of their own (so no count or
 * limit per address is shared) and run side by side: they wait on the pace, a network going away, a kill. The
 * short runs whose folder or message is the point (the one-address run, --retry-errors, --plan, the 403's
 * resume, the refusals after a case's first) run the CLI's code in this process (runInProcess), without a CLI's
 * start-up each; what only a process shows (kill -9, the first refusal's exit through main.ts) stays spawned,
 * and so do the resumes paced at the limits (in this process they would wait for each other's turn).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { limiterId } from '../../src/limits/redis.js';
import type { CallerStats } from '@bre-batch/sandbox';
import { runArgs, spawnCli, startCli, waitForLines, type CliResult } from '../helpers/cli.js';
import { runInProcess } from '../helpers/cli-in-process.js';
import { invariantProblems, locationCsv, readOutput, type OutputLine } from '../helpers/output.js';
import { itRedis, REDIS_URL } from '../helpers/redis.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const PER_SECOND = 10;
const RATE = ['--rate', `workflow=${PER_SECOND}/s`, '--rate-slack', '2s'];

/** The stages of each result by key, without what differs between any two calls (the request id). */
function resultsByKey(lines: readonly OutputLine[]): Map<unknown, string> {
  return new Map(
    lines.map((l) => [l.key, JSON.stringify(l.stages, (k, v: unknown) => (k === 'request_id' ? undefined : v))]),
  );
}

function callers(sb: TestSandbox): Readonly<Record<string, CallerStats>> {
  return sb.sandbox.stats().services.workflow.callers;
}

const why = (r: CliResult) => `exit ${r.code}\n${r.stderr.slice(-2000)}`;

/** The case's own sandbox at PER_SECOND per caller address, closed when the case ends. */
async function sandboxFor(t: TestContext): Promise<TestSandbox> {
  const sb = await startTestSandbox({ rate: { workflow: { limit: PER_SECOND, windowMs: 1000 } } });
  t.onTestFinished(() => sb.close());
  return sb;
}

describe('--local-address: several source addresses, each at its own limit', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: { limit: PER_SECOND, windowMs: 1000 } } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  it('three addresses: all used, each within its limit in every window, no 429, the results of a one-address run', async () => {
    const dir = tempDir('bre-egress-');
    const rows = 120;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'three');
    const metrics = join(dir, 'bre.prom');
    const before = callers(sb);
    const r = await spawnCli(
      runArgs(
        'location',
        input,
        out,
        ...RATE,
        '--local-address',
        '127.0.0.2,127.0.0.3',
        '--local-address',
        '127.0.0.4',
        '--metrics-file',
        metrics,
      ),
      sb.env(),
    );
    expect(r.code, why(r)).toBe(0);
    const three = readOutput(out);
    expect(invariantProblems(rows, three)).toEqual([]);
    const seen = callers(sb);
    for (const a of ADDRESSES) {
      const c = seen[a];
      expect(c, `the sandbox saw no call from ${a}`).toBeDefined();
      expect(c.admitted - (before[a]?.admitted ?? 0)).toBeGreaterThan(rows / 6);
      expect(c.maxInWindow).toBeLessThanOrEqual(PER_SECOND);
      expect(c.throttled).toBe(0);
    }
    const admitted = ADDRESSES.reduce((n, a) => n + seen[a].admitted - (before[a]?.admitted ?? 0), 0);
    expect(admitted).toBe(rows);
    // The summary, the stdout lines and the metrics say the same per address.
    const summary = three.summary;
    expect(Object.keys(summary.addresses).sort()).toEqual(ADDRESSES);
    for (const a of ADDRESSES) {
      const s = summary.addresses[a];
      expect(s.calls).toBe(seen[a].admitted - (before[a]?.admitted ?? 0));
      expect(s.throttled_429).toBe(0);
      expect(s.rows_moved_away).toBe(0);
      expect(s.circuit_open).toBeNull();
      expect(s.services.workflow.achieved_per_minute).toBeGreaterThan(0);
      expect(r.stdout).toContain(`from ${a}: ${s.rows} rows, ${s.calls} calls, 0 x 429`);
      expect(readFileSync(metrics, 'utf8')).toMatch(
        new RegExp(`bre_batch_calls_total\\{[^}]*address="${a.replace(/\./g, '\\.')}"[^}]*\\} ${s.calls}\\n`),
      );
    }
    expect(summary.services.workflow.throttled_429).toBe(0);

    // The same input from one address (a sandbox without a limit, so that it is quick): the same results.
    const free = await startTestSandbox({ rate: { workflow: null } });
    try {
      const one = join(dir, 'one');
      const r1 = await runInProcess(runArgs('location', input, one, '--rate', 'off'), free.env());
      expect(r1.code, why(r1)).toBe(0);
      expect(readOutput(one).summary.addresses).toBeUndefined();
      expect(resultsByKey(readOutput(one).results)).toEqual(resultsByKey(three.results));
    } finally {
      await free.close();
    }
  }, 90_000);
});

describe('--local-address with --redis: one shared budget per address', () => {
  // 300 ms of slack per window at 20/s, as in redis-workers.test.ts (less was below what workers starting
  // at once on two loaded cores can take); more calls per address than the limit, so that two workers each
  // at the full rate (a budget not shared) would draw 429s.
  const LIMIT = 200;
  const WINDOW_MS = 10_000;
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ rate: { workflow: { limit: LIMIT, windowMs: WINDOW_MS } } });
  });
  afterAll(async () => {
    await sb?.close();
  });

  itRedis(
    "two workers sharing two addresses stay within each address's limit; the limiter ids name the address",
    async () => {
      const dir = tempDir('bre-egress-redis-');
      const rows = 500;
      const input = locationCsv(dir, rows);
      const suffix = randomUUID();
      const shared = ['127.0.0.2', '127.0.0.3'];
      const worker = (k: number) =>
        startCli(
          runArgs(
            'location',
            input,
            join(dir, `w${k}`),
            '--shard',
            `${k}/2`,
            '--redis',
            REDIS_URL,
            '--rate',
            `workflow=${(LIMIT * 60_000) / WINDOW_MS}/min`,
            '--local-address',
            shared.join(','),
          ),
          sb.env(undefined, { BRE_LIMITER_ID_SUFFIX: suffix }),
        );
      const results = await Promise.all([worker(1).done, worker(2).done]);
      expect(
        results.map((r) => r.code),
        results.map(why).join('\n'),
      ).toEqual([0, 0]);
      for (const k of [1, 2])
        expect(invariantProblems(rows, readOutput(join(dir, `w${k}`))).filter((p) => !/rows missing/.test(p))).toEqual(
          [],
        );
      const seen = callers(sb);
      for (const a of shared) {
        expect(seen[a].admitted).toBeGreaterThan(0);
        expect(seen[a].maxInWindow).toBeLessThanOrEqual(LIMIT);
        expect(seen[a].throttled).toBe(0);
      }
      expect(shared.reduce((n, a) => n + seen[a].admitted, 0)).toBe(rows);
      const redis = new Redis(REDIS_URL);
      try {
        for (const a of shared) {
          const id = limiterId('workflow', sb.sandbox.clientId, suffix, a);
          expect(id.endsWith(`:${suffix}@${a}`)).toBe(true);
          expect(await redis.exists(`b_${id}_settings`), `no Redis budget ${id}`).toBe(1);
        }
      } finally {
        redis.disconnect();
      }
    },
    120_000,
  );
});

describe.concurrent('--local-address: an address refused or gone, every address failing, a kill, --retry-errors, --plan', () => {
  it('an address that is not on this machine: exit 2 naming it and why, nothing sent, no output folder', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir('bre-egress-bad-');
    const input = locationCsv(dir, 5);
    const requests = sb.sandbox.stats().services.workflow.requests;
    const out = join(dir, 'out');
    const r = await spawnCli(
      runArgs('location', input, out, ...RATE, '--local-address', '127.0.0.2,192.0.2.1'),
      sb.env(),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--local-address 192\.0\.2\.1 cannot be used: EADDRNOTAVAIL \(the address is not on this machine\)/,
    );
    expect(existsSync(out)).toBe(false);
    // The same from the environment, and a value that is not an address at all.
    const fromEnv = await runInProcess(
      runArgs('location', input, out, ...RATE),
      sb.env(undefined, { BRE_LOCAL_ADDRESSES: '127.0.0.3 10.255.255.1' }),
    );
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/--local-address 10\.255\.255\.1 cannot be used: EADDRNOTAVAIL/);
    const junk = await runInProcess(runArgs('location', input, out, '--local-address', 'eth0'), sb.env());
    expect(junk.code).toBe(2);
    expect(junk.stderr).toMatch(
      /Expected --local-address to be an IP address of this machine \(e\.g\. 10\.0\.0\.5\), got 'eth0'/,
    );
    expect(existsSync(out)).toBe(false);
    expect(sb.sandbox.stats().services.workflow.requests).toBe(requests);
  }, 60_000);

  it('an address whose network goes away mid-run: its rows move to the others, none in errors, the summary says so', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir('bre-egress-down-');
    const rows = 150;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const base = callers(sb)['127.0.0.3']?.admitted ?? 0;
    const run = startCli(
      runArgs(
        'location',
        input,
        out,
        ...RATE,
        '--local-address',
        ADDRESSES.join(','),
        '--max-attempts',
        '2',
        '--max-consecutive-failures',
        '3',
      ),
      sb.env(),
    );
    try {
      await waitFor(() => (callers(sb)['127.0.0.3']?.admitted ?? 0) >= base + 10, 30_000, '10 calls from 127.0.0.3');
      sb.sandbox.setBlocked(['127.0.0.3']);
      const r = await run.done;
      expect(r.code, why(r)).toBe(0);
    } finally {
      sb.sandbox.setBlocked([]);
    }
    const folder = readOutput(out);
    expect(invariantProblems(rows, folder)).toEqual([]);
    expect(folder.errors).toEqual([]);
    const down = folder.summary.addresses['127.0.0.3'];
    expect(down.rows_moved_away).toBeGreaterThan(0);
    expect(down.failures).toBeGreaterThanOrEqual(down.rows_moved_away);
    expect(down.circuit_open).toMatch(/consecutive calls failed after all retries \(last: NETWORK\)/);
    expect(callers(sb)['127.0.0.3'].blocked).toBeGreaterThan(0);
    for (const a of ['127.0.0.2', '127.0.0.4']) {
      expect(folder.summary.addresses[a].rows_moved_away).toBe(0);
      expect(callers(sb)[a].maxInWindow).toBeLessThanOrEqual(PER_SECOND);
    }
    const started = ADDRESSES.reduce((n, a) => n + folder.summary.addresses[a].rows, 0);
    expect(started).toBe(rows + down.rows_moved_away);
    expect(run.stderr()).toMatch(
      /address 127\.0\.0\.3 is failing \(3 consecutive calls failed after all retries \(last: NETWORK\)\): its rows go to the 2 other addresses/,
    );
    expect(run.stdout()).toMatch(/from 127\.0\.0\.3: .* rows moved to other addresses \(failing: /);
  }, 90_000);

  it('every address failing: the run stops (exit 3) and the same command resumes it once they are back', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir('bre-egress-alldown-');
    const rows = 90;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs(
      'location',
      input,
      out,
      ...RATE,
      '--local-address',
      ADDRESSES.slice(0, 2).join(','),
      '--max-attempts',
      '1',
      '--max-consecutive-failures',
      '2',
    );
    const run = startCli(args, sb.env());
    try {
      await waitForLines(run, join(out, 'results.ndjson'), 10);
      sb.sandbox.setBlocked(ADDRESSES.slice(0, 2));
      const r = await run.done;
      expect(r.code, why(r)).toBe(3);
      expect(r.stderr).toMatch(/stopping: every --local-address is failing/);
    } finally {
      sb.sandbox.setBlocked([]);
    }
    const stopped = readOutput(out);
    expect(stopped.results.length + stopped.errors.length).toBeLessThan(rows);
    const r2 = await spawnCli(args, sb.env());
    expect(r2.code, why(r2)).toBeLessThanOrEqual(1);
    expect(invariantProblems(rows, readOutput(out))).toEqual([]);
  }, 90_000);

  it('kill -9 with three addresses, then the same command: every row once, the rest from all three', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir('bre-egress-kill-');
    // 5 s at 30/s: killed after the first 45, the rest (3.5 s) left to the resume.
    const rows = 150;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    const args = runArgs('location', input, out, ...RATE, '--local-address', ADDRESSES.join(','));
    const first = startCli(args, sb.env());
    await waitForLines(first, join(out, 'results.ndjson'), 45);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const doneBefore = readOutput(out).results.length;
    expect(doneBefore).toBeLessThan(rows);
    const r = await spawnCli(args, sb.env());
    expect(r.code, why(r)).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(rows, folder)).toEqual([]);
    expect(folder.errors).toEqual([]);
    // The resumed session sent only the rows not done, spread over the three addresses.
    expect(folder.summary.rows.resumed).toBe(doneBefore);
    const session = folder.summary.addresses;
    expect(ADDRESSES.reduce((n, a) => n + session[a].rows, 0)).toBe(rows - doneBefore);
    for (const a of ADDRESSES) expect(session[a].rows).toBeGreaterThan(0);
  }, 90_000);

  it('--retry-errors with three addresses runs the failed rows again from all of them', async (t) => {
    const sb = await sandboxFor(t);
    const dir = tempDir('bre-egress-retry-');
    const rows = 90;
    const input = locationCsv(dir, rows);
    const out = join(dir, 'out');
    sb.sandbox.setFaults({ 503: 0.3 });
    let first: CliResult;
    try {
      first = await spawnCli(
        runArgs(
          'location',
          input,
          out,
          ...RATE,
          '--local-address',
          ADDRESSES.join(','),
          '--max-attempts',
          '1',
          '--max-consecutive-failures',
          '0',
          '--max-failure-share',
          '1',
        ),
        sb.env(),
      );
    } finally {
      sb.sandbox.setFaults({});
    }
    expect(first.code, why(first)).toBe(1);
    const failed = readOutput(out).errors;
    expect(failed.length).toBeGreaterThan(0);
    // A 503 is the service's, not the address's: written as the row's error, not moved.
    expect(new Set(failed.map((e) => e.code))).toEqual(new Set(['SERVER_UNAVAILABLE']));
    const r = await runInProcess(
      runArgs('location', input, out, ...RATE, '--local-address', ADDRESSES.join(','), '--retry-errors'),
      sb.env(),
    );
    expect(r.code, why(r)).toBe(0);
    const folder = readOutput(out);
    expect(invariantProblems(rows, folder)).toEqual([]);
    expect(folder.errors).toEqual([]);
    expect(folder.summary.rows.retried_from_errors).toBe(failed.length);
    expect(ADDRESSES.reduce((n, a) => n + folder.summary.addresses[a].rows, 0)).toBe(failed.length);
  }, 90_000);

  it('--plan counts the addresses and shows both ways to more IPs', async () => {
    const dir = tempDir('bre-egress-plan-');
    const input = locationCsv(dir, 300);
    const plan = (hours: string) =>
      runInProcess(
        [
          'run',
          'location',
          '--input',
          input,
          '--plan',
          '--rate',
          'workflow=1/min',
          '--window-hours',
          hours,
          '--local-address',
          ADDRESSES.join(','),
        ],
        {},
      );
    const fits = await plan('2');
    expect(fits.code, fits.stderr).toBe(0);
    expect(fits.stdout).toMatch(/time from one egress IP: about 5 h/);
    expect(fits.stdout).toMatch(/3 addresses on this host \(--local-address\): about 1 h 40 min/);
    expect(fits.stdout).toMatch(/fits a 2 h window from the 3 addresses on this host/);
    const short = await plan('1');
    expect(short.code, short.stderr).toBe(0);
    const needs = /a 1 h window needs (\d+) egress IPs, each allow-listed with its own limit \(this host has 3\):/.exec(
      short.stdout,
    );
    expect(needs, short.stdout).not.toBeNull();
    const n = needs![1];
    expect(short.stdout).toContain(
      `one host with ${n} addresses: --local-address ADDR1,...,ADDR${n} (one process, one output folder`,
    );
    expect(short.stdout).toContain(`or ${n} hosts: run --shard K/${n} behind each`);
  }, 60_000);
});

describe.concurrent('--local-address with an address the provider has not allow-listed', () => {
  it('its 403 stops the run (exit 3) naming the address; without it, the same command resumes', async () => {
    const sb = await startTestSandbox({ rate: { workflow: null }, allow: ['127.0.0.1/32', '127.0.0.2/32'] });
    try {
      const dir = tempDir('bre-egress-403-');
      const rows = 60;
      const input = locationCsv(dir, rows);
      const out = join(dir, 'out');
      const r = await spawnCli(
        runArgs('location', input, out, '--rate', 'off', '--local-address', '127.0.0.2,127.0.0.3'),
        sb.env(),
      );
      expect(r.code, why(r)).toBe(3);
      expect(r.stderr).toMatch(
        /refused this machine's IP address \(HTTP 403 Forbidden\).*\(calls from --local-address 127\.0\.0\.3\)/,
      );
      expect(readOutput(out).errors).toEqual([]);
      const again = await runInProcess(
        runArgs('location', input, out, '--rate', 'off', '--local-address', '127.0.0.2'),
        sb.env(),
      );
      expect(again.code, why(again)).toBe(0);
      expect(invariantProblems(rows, readOutput(out))).toEqual([]);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
