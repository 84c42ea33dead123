/**
 * Scale-out on one egress IP (issue 6, points 1-3): several `run --shard K/N --redis URL` worker processes
 * over one input share each service's limit through Redis, against ONE sandbox enforcing a strict sliding
 * window. Checked: together they stay within the limit in every window with zero 429s, and the union of their
 * output folders is complete and disjoint (merge succeeds); a worker killed with SIGKILL and restarted with the
 * same command completes its share; Redis killed and restarted mid-run loses no row. How close to the limit
 * they get is the benchmark's to measure (`npm run bench -- --only shared`), not a test's.
 *
 * The window: the sandbox enforces 200 calls per 10 s (20/s) and the workers run at --rate workflow=1200/min
 * (20/s on average), which leaves 300 ms of slack per server window (src/limits/redis.ts). Less (100 per 5 s
 * left 150 ms) was below what three workers starting at once on two shared cores can take: their first calls
 * reached the server up to hundreds of ms after their slots, on a machine loaded by other tests, and the
 * calls one window later, on time, drew a 429 now and then. The documented limits are per minute (slack ~1.8 s).
 *
 * Each test uses its own limiter ids (BRE_LIMITER_ID_SUFFIX), so parallel tests never share a budget. The
 * tests are skipped with a message when no Redis answers, and fail under CI=true.
 *
 * The cases that count 429s against the shared limit (three workers; a worker killed and started again) run on
 * their own, one after the other: a starved worker sends a granted call late. The two that do not (Redis
 * unreachable at the start; Redis restarted mid-run, whose 429s are retried) each have a sandbox of their own
 * and run side by side.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { mergeOutputs } from '../../src/output/merge.js';
import type { SandboxStats } from '@bre-batch/sandbox';
import { runArgs, startCli, waitForLines, type CliResult, type RunningCli } from '../helpers/cli.js';
import { invariantProblems, locationCsv, readOutput } from '../helpers/output.js';
import { itRedis, OwnRedis, REDIS_OUTAGE_MS, REDIS_URL, sparePort } from '../helpers/redis.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { sleep } from '../helpers/wait.js';

const LIMIT = 200;
const WINDOW_MS = 10_000;
const PER_SECOND = (LIMIT * 1000) / WINDOW_MS;
const CLIENT_RATE = `workflow=${PER_SECOND * 60}/min`;

/** Times of the first and last request the sandbox saw, polled every 10 ms. */
function watchRequests(stats: () => SandboxStats): { stop(): { first: number; last: number; requests: number } } {
  let first = 0;
  let last = 0;
  let seen = 0;
  const timer = setInterval(() => {
    const n = stats().services.workflow.requests;
    if (n > seen) {
      if (seen === 0) first = performance.now();
      last = performance.now();
      seen = n;
    }
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return { first, last, requests: seen };
    },
  };
}

function failureText(results: readonly CliResult[]): string {
  return results
    .map((r, i) => `worker ${i + 1}: exit ${r.code} ${r.signal ?? ''}\n${r.stderr.slice(-1500)}`)
    .join('\n');
}

const worker = (input: string, out: string, k: number, n: number, redisUrl = REDIS_URL, extra: string[] = []) =>
  runArgs('location', input, out, '--shard', `${k}/${n}`, '--redis', redisUrl, '--rate', CLIENT_RATE, ...extra);

/** The case's own sandbox enforcing the limit, closed when the case ends. */
async function sandboxFor(t: TestContext): Promise<TestSandbox> {
  const sb = await startTestSandbox({ rate: { workflow: { limit: LIMIT, windowMs: WINDOW_MS } } });
  t.onTestFinished(() => sb.close());
  return sb;
}

describe.concurrent('workers and a Redis that is not there, side by side', () => {
  const env = (sb: TestSandbox) => sb.env(undefined, { BRE_LIMITER_ID_SUFFIX: randomUUID() });

  it('Redis unreachable at start: exit 2 with a clear message, no call made, no password shown', async (t) => {
    const sb = await sandboxFor(t);
    const before = sb.sandbox.stats().services.workflow.requests;
    const dir = tempDir('bre-redis-down-');
    const input = locationCsv(dir, 5);
    const port = await sparePort();
    const r = await startCli(
      runArgs('location', input, join(dir, 'out'), '--redis', `redis://:hunter2@127.0.0.1:${port}`),
      env(sb),
    ).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`cannot reach Redis at redis://127.0.0.1:${port} for the shared limiter`));
    expect(r.stderr + r.stdout).not.toContain('hunter2');
    expect(sb.sandbox.stats().services.workflow.requests).toBe(before);
  });

  itRedis(
    'Redis killed and restarted mid-run: the workers carry on and no row is lost',
    async (t) => {
      const sb = await sandboxFor(t);
      const own = new OwnRedis(await sparePort());
      await own.start();
      try {
        const dir = tempDir('bre-redis-restart-');
        // 6 s at the rate: Redis goes away (1.5 s) after the first 15 lines of w1, with most rows still to come.
        const rows = 120;
        const input = locationCsv(dir, rows);
        const before = sb.sandbox.stats().services.workflow;
        const e = env(sb);
        const runs = [1, 2].map((k) => startCli(worker(input, join(dir, `w${k}`), k, 2, own.url), e));
        await waitForLines(runs[0], join(dir, 'w1', 'results.ndjson'), 15, 30_000);
        // Both workers past their start (a Redis missing at the start is a configuration error, exit 2): on a
        // loaded machine the second may still be starting when the first has 15 rows.
        await waitForLines(runs[1], join(dir, 'w2', 'results.ndjson'), 1, 30_000);
        await own.kill();
        await sleep(REDIS_OUTAGE_MS);
        await own.start();
        const results = await Promise.all(runs.map((r) => r.done));
        expect(
          results.map((r) => r.code),
          failureText(results),
        ).toEqual([0, 0]);
        const merged = await mergeOutputs({ dirs: [join(dir, 'w1'), join(dir, 'w2')], out: join(dir, 'merged') });
        expect(merged.ok, JSON.stringify(merged.problems)).toBe(true);
        expect(invariantProblems(rows, readOutput(join(dir, 'merged')))).toEqual([]);
        // The restarted (empty) Redis holds the limiter again: the workers re-created it there.
        const probe = new Redis(own.url);
        try {
          expect((await probe.keys('b_bre-batch:workflow:*_settings')).length).toBe(1);
        } finally {
          probe.disconnect();
        }
        const wf = sb.sandbox.stats().services.workflow;
        process.stderr.write(
          `  Redis restarted mid-run: ${wf.requests - before.requests} calls for ${rows} rows, ${wf.sent429 - before.sent429} x 429 (retried)\n`,
        );
      } finally {
        await own.kill();
      }
    },
    90_000,
  );
});

describe('workers sharing one limit through Redis, each case on its own', () => {
  const env = (sb: TestSandbox) => sb.env(undefined, { BRE_LIMITER_ID_SUFFIX: randomUUID() });

  itRedis(
    'three workers together stay within the limit, no 429, and their outputs merge into every row once',
    async (t) => {
      const sb = await sandboxFor(t);
      const before = sb.sandbox.stats().services.workflow;
      const dir = tempDir('bre-redis-');
      // more rows than the limit, so that the server's window is full and slides (by 50 calls, 2.5 s)
      const rows = 250;
      const input = locationCsv(dir, rows);
      const e = env(sb);
      const watch = watchRequests(() => sb.sandbox.stats());
      const runs: RunningCli[] = [1, 2, 3].map((k) => startCli(worker(input, join(dir, `w${k}`), k, 3), e));
      const results = await Promise.all(runs.map((r) => r.done));
      const seen = watch.stop();
      expect(
        results.map((r) => r.code),
        failureText(results),
      ).toEqual([0, 0, 0]);
      const wf = sb.sandbox.stats().services.workflow;
      expect(wf.sent429 - before.sent429).toBe(0);
      expect(wf.maxInWindow).toBeLessThanOrEqual(LIMIT);
      const calls = wf.requests - before.requests;
      expect(calls).toBe(rows);
      const achieved = (calls - 1) / ((seen.last - seen.first) / 1000);
      process.stderr.write(
        `  3 workers on one Redis limiter: ${calls} calls, ${achieved.toFixed(2)}/s combined = ${((100 * achieved) / PER_SECOND).toFixed(1)}% of ${PER_SECOND}/s, ${wf.sent429 - before.sent429} x 429\n`,
      );
      expect(achieved).toBeLessThanOrEqual(PER_SECOND);
      // Each worker did only its shard, and the shards together are the input.
      for (const k of [1, 2, 3]) expect(readOutput(join(dir, `w${k}`)).summary.rows.out_of_shard).toBeGreaterThan(0);
      const merged = await mergeOutputs({ dirs: [1, 2, 3].map((k) => join(dir, `w${k}`)), out: join(dir, 'merged') });
      expect(merged.ok, JSON.stringify(merged.problems)).toBe(true);
      expect(invariantProblems(rows, readOutput(join(dir, 'merged')))).toEqual([]);
    },
    90_000,
  );

  itRedis(
    'a worker killed with SIGKILL mid-run and started again with the same command completes its share',
    async (t) => {
      const sb = await sandboxFor(t);
      const before = sb.sandbox.stats().services.workflow;
      const dir = tempDir('bre-redis-kill-');
      // 6 s at the rate: w1 (half of them, 10/s) is killed after its first 15, 45 left to the restart.
      const rows = 120;
      const input = locationCsv(dir, rows);
      const e = env(sb);
      const args = (k: number) => worker(input, join(dir, `w${k}`), k, 2, REDIS_URL, ['--timeout', 'workflow=5s']);
      const w1 = startCli(args(1), e);
      const w2 = startCli(args(2), e);
      await waitForLines(w1, join(dir, 'w1', 'results.ndjson'), 15, 30_000);
      w1.child.kill('SIGKILL');
      const killed = await w1.done;
      expect(killed.signal).toBe('SIGKILL');
      const again = startCli(args(1), e);
      const results = [await again.done, await w2.done];
      expect(
        results.map((r) => r.code),
        failureText(results),
      ).toEqual([0, 0]);
      expect(readOutput(join(dir, 'w1')).summary.rows.resumed).toBeGreaterThanOrEqual(15);
      const merged = await mergeOutputs({ dirs: [join(dir, 'w1'), join(dir, 'w2')], out: join(dir, 'merged') });
      expect(merged.ok, JSON.stringify(merged.problems)).toBe(true);
      expect(invariantProblems(rows, readOutput(join(dir, 'merged')))).toEqual([]);
      expect(sb.sandbox.stats().services.workflow.sent429 - before.sent429).toBe(0);
    },
    90_000,
  );
});
