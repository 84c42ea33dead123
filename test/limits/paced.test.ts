import { describe, expect, it } from 'vitest';
import { BreError, isBreError } from '@bre-batch/core/errors';
import { PacedLimiter } from '../../src/limits/paced.js';
import { PATH_SLACK_MS, pacingFor } from '../../src/limits/pacer.js';
import type { Rate } from '@bre-batch/core/rates';
import { manualClock, settle } from '../helpers/clock.js';

/** A limiter on a manual clock, and jobs that record when they start and finish when the test says. */
function setup(rate: Rate | null, concurrency = 1000) {
  const mc = manualClock();
  const limiter = new PacedLimiter({ service: 'workflow', rate, concurrency, clock: mc.clock, random: () => 0.5 });
  const started: { name: string; at: number }[] = [];
  const open = new Map<string, () => void>();
  /** A job that finishes when `finish(name)` is called (or at once when `instant`); `written`: its request goes out. */
  const job = (name: string, retry = false, instant = true, written = false) =>
    limiter.schedule(async (sent) => {
      started.push({ name, at: mc.now() });
      if (written) sent();
      if (!instant) await new Promise<void>((r) => open.set(name, r));
      return name;
    }, retry);
  const finish = async (name: string) => {
    open.get(name)!();
    await settle();
  };
  const inFlight = () => started.length - [...open.keys()].length + open.size;
  return { mc, limiter, started, job, finish, inFlight, names: () => started.map((s) => s.name) };
}

describe('PacedLimiter (the ServiceLimiter contract, on an injected clock)', () => {
  it('starts a job at once, inside schedule, when nothing holds it', () => {
    const { limiter, started, job } = setup({ limit: 10, windowMs: 1000 });
    void job('a');
    expect(started.map((s) => s.name)).toEqual(['a']);
    expect(limiter.nextStartInMs()).toBeCloseTo(pacingFor({ limit: 10, windowMs: 1000 }).intervalMs, 9);
  });

  it.each([
    ['10/s', { limit: 10, windowMs: 1000 }, 3000],
    ['1000/s', { limit: 1000, windowMs: 1000 }, 3000],
    ['5000/s', { limit: 5000, windowMs: 1000 }, 3000],
    ['100000/s', { limit: 100_000, windowMs: 1000 }, 500],
    ['60/min', { limit: 60, windowMs: 60_000 }, 180_000],
  ])('%s: starts spaced by the pacing, many per timer wake-up at high rates', async (_name, rate, ms) => {
    const { mc, started, job } = setup(rate);
    const n = Math.ceil((rate.limit * ms) / rate.windowMs) + 50;
    const all = Array.from({ length: n }, (_, i) => job(`j${i}`));
    await mc.advance(ms, (at) => at % 3); // wake-ups 0-2 ms late
    const interval = pacingFor(rate).intervalMs;
    const expected = Math.floor(ms / interval) + 1;
    expect(started.length).toBeGreaterThanOrEqual(Math.floor(expected * 0.99));
    expect(started.length).toBeLessThanOrEqual(expected);
    // one timer per wake-up, not per start: at most one a ms
    expect(mc.armed()).toBeLessThanOrEqual(ms + 1);
    // never more than the limit in any window (the log's span on actual starts)
    const p = pacingFor(rate);
    for (let i = 0; i + p.guardCount < started.length; i += 1)
      expect(started[i + p.guardCount].at - started[i].at).toBeGreaterThanOrEqual(p.guardSpanMs);
    void Promise.allSettled(all);
  });

  it('retries go ahead of first attempts still queued', async () => {
    const { mc, job, names } = setup({ limit: 10, windowMs: 1000 });
    for (const n of ['f1', 'f2', 'f3']) void job(n);
    void job('r1', true);
    void job('f4');
    void job('r2', true);
    await mc.advance(1000);
    expect(names()).toEqual(['f1', 'r1', 'r2', 'f2', 'f3', 'f4']);
  });

  it('caps attempts in flight, with or without a rate', async () => {
    for (const rate of [null, { limit: 1000, windowMs: 1000 }]) {
      const { mc, job, finish, names } = setup(rate, 2);
      for (const n of ['a', 'b', 'c', 'd']) void job(n, false, false);
      await mc.advance(100);
      expect(names()).toEqual(['a', 'b']);
      await finish('a');
      await mc.advance(100);
      expect(names()).toEqual(['a', 'b', 'c']);
      await finish('b');
      await finish('c');
      await mc.advance(100);
      expect(names()).toEqual(['a', 'b', 'c', 'd']);
    }
  });

  it('after a 429 nothing starts until the pause ends, then the spacing resumes without a burst', async () => {
    const rate = { limit: 100, windowMs: 1000 };
    const { mc, limiter, started, job } = setup(rate);
    void job('a');
    limiter.onThrottled(2);
    expect(limiter.pausedUntil).toBe(mc.wall() + 2000);
    expect(limiter.nextStartInMs()).toBe(2000);
    const t0 = mc.now();
    for (let i = 0; i < 5; i += 1) void job(`q${i}`);
    await mc.advance(1999);
    expect(started).toHaveLength(1);
    await mc.advance(100);
    const after = started.slice(1).map((s) => s.at - t0);
    expect(after[0]).toBeGreaterThanOrEqual(2000);
    for (let i = 1; i < after.length; i += 1)
      expect(after[i] - after[i - 1]).toBeGreaterThanOrEqual(pacingFor(rate).intervalMs - 1);
    // a second pause, no Retry-After: the documented back-off doubles (2 s, jitter drawn at its middle)
    limiter.onThrottled();
    expect(limiter.pausedUntil).toBe(mc.wall() + 2000);
    // a 429 during the pause (an attempt sent before it) is the same refusal: the pause does not grow
    limiter.onThrottled(0);
    expect(limiter.pausedUntil).toBe(mc.wall() + 2000);
    // an answer that is not a 429 ends the spell: the next pause is the first step again
    limiter.onSuccess();
    await mc.advance(2000);
    limiter.onThrottled(0);
    expect(limiter.pausedUntil).toBe(mc.wall() + 1000);
  });

  it.each([
    // rate, its margin, then the path bound and the margin after each 429 (each a window after the one before)
    [
      '10/s',
      { limit: 10, windowMs: 1000 },
      2.5,
      [
        [500, 20],
        [1000, 40],
        [1000, 80],
        [1000, 100],
        [1000, 100],
      ],
    ],
    [
      '500/min',
      { limit: 500, windowMs: 60_000 },
      32,
      [
        [500, 64],
        [1000, 128],
        [2000, 256],
        [2000, 512],
        [2000, 1000],
        [2000, 1000],
      ],
    ],
  ])(
    '%s: a 429 doubles the path bound (up to the window or 2 s) and the margin (to 20 ms at least, up to a tenth of the window or 1 s), once per window',
    async (_name, rate, margin, after) => {
      const { mc, limiter } = setup(rate);
      expect(limiter.stats()).toMatchObject({ slackMs: 250, marginMs: margin });
      for (const expected of after) {
        limiter.onThrottled();
        // a burst of 429s from one late spell counts once
        limiter.onThrottled();
        expect([limiter.stats().slackMs, limiter.stats().marginMs]).toEqual(expected);
        await mc.advance(rate.windowMs);
      }
    },
  );

  it('the adaptive limiter lowers its rate on a 429 instead of widening the margin', async () => {
    const { AdaptiveLimiter } = await import('../../src/limits/adaptive.js');
    const mc = manualClock();
    const l = new AdaptiveLimiter(
      { service: 'account', rate: { limit: 120, windowMs: 60_000 }, concurrency: 4, clock: mc.clock },
      { now: mc.now },
    );
    l.onThrottled();
    expect(l.stats()).toMatchObject({ marginMs: 32, currentPerMinute: 96 });
  });

  it('counts the time jobs waited, and how many were scheduled', async () => {
    const { mc, limiter, job } = setup({ limit: 1, windowMs: 1000 });
    void job('a');
    void job('b');
    await mc.advance(2000);
    const st = limiter.stats();
    expect(st.scheduled).toBe(2);
    expect(st.waitMs).toBe(Math.ceil(pacingFor({ limit: 1, windowMs: 1000 }).intervalMs));
    expect(st.currentPerMinute).toBe(60);
  });

  it('nextStartInMs counts the queue ahead: one interval per queued job', async () => {
    const rate = { limit: 10, windowMs: 1000 };
    const { limiter, job } = setup(rate);
    const t = pacingFor(rate).intervalMs;
    expect(limiter.nextStartInMs()).toBe(0);
    for (let i = 0; i < 4; i += 1) void job(`j${i}`);
    // one started, three queued; the next slot is one interval away, and three more are taken before ours
    expect(limiter.nextStartInMs()).toBeCloseTo(t + 3 * t, 9);
  });

  it('nextStartInMs without a rate: 0 while under the cap, else queued jobs times the gap between finishes', async () => {
    const { mc, limiter, job, finish } = setup(null, 2);
    expect(limiter.nextStartInMs()).toBe(0);
    void job('a', false, false);
    void job('b', false, false);
    for (let i = 0; i < 3; i += 1) void job(`c${i}`, false, false);
    await mc.advance(10);
    await finish('a');
    await mc.advance(10);
    await finish('b');
    // one finish every 10 ms (measured), two jobs in flight, three queued (one of them started): the fourth
    // in line waits about 2 x 10 ms... the estimate is positive and grows with the queue
    const est = limiter.nextStartInMs();
    expect(est).toBeGreaterThan(0);
    void job('d', false, false);
    expect(limiter.nextStartInMs()).toBeGreaterThan(est);
  });

  it('a start waits for the answer of the call a limit before it (not written: no bound), then the guard span', async () => {
    const { mc, started, job, finish } = setup({ limit: 1, windowMs: 1000 });
    void job('a', false, false);
    void job('b');
    await mc.advance(5000);
    expect(started.map((s) => s.name)).toEqual(['a']);
    await finish('a');
    // answered at 5000: the guard span is the window and its margin (2.5 ms), on whole-ms timers
    await mc.advance(1002);
    expect(started.map((s) => s.name)).toEqual(['a']);
    await mc.advance(1);
    expect(started.map((s) => ({ ...s }))).toEqual([
      { name: 'a', at: 0 },
      { name: 'b', at: 6003 },
    ]);
  });

  it('a call written and never answered is taken to have reached the server PATH_SLACK_MS after its write', async () => {
    const { mc, started, job } = setup({ limit: 1, windowMs: 1000 });
    void job('a', false, false, true);
    void job('b');
    await mc.advance(1252);
    expect(started.map((s) => s.name)).toEqual(['a']);
    await mc.advance(1);
    expect(started.map((s) => ({ ...s }))).toEqual([
      { name: 'a', at: 0 },
      { name: 'b', at: 1253 },
    ]);
  });

  describe('an attempt this side cut (issue 24): the log keeps it as a call the server may have counted', () => {
    /** `a` is written at 0 and fails at 100 with `code`; `b` waits for the log's entry of `a`. */
    async function cutAt100(code: 'TIMEOUT' | 'INTERRUPTED' | 'NETWORK', written: boolean) {
      const { mc, limiter, started, job } = setup({ limit: 1, windowMs: 1000 });
      let fail!: () => void;
      const a = limiter.schedule(async (sent) => {
        started.push({ name: 'a', at: mc.now() });
        if (written) sent();
        await new Promise<void>((r) => (fail = r));
        throw new BreError(code, `a ${code}`);
      });
      void a.catch(() => undefined);
      void job('b');
      await mc.advance(100);
      fail();
      await mc.advance(5000);
      return started.map((s) => ({ ...s }));
    }

    it.each([['TIMEOUT'], ['INTERRUPTED']] as const)(
      '%s after its write: the entry stays at the write plus PATH_SLACK_MS, not at the cut',
      async (code) => {
        // cut at 100, long before 0 + 250: the server may still get it at 250, so b waits 250 + 1002.5
        expect(await cutAt100(code, true)).toEqual([
          { name: 'a', at: 0 },
          { name: 'b', at: PATH_SLACK_MS + 1003 },
        ]);
      },
    );

    it('a failure the server sent (NETWORK: its reset) bounds the entry at the failure, as an answer does', async () => {
      expect(await cutAt100('NETWORK', true)).toEqual([
        { name: 'a', at: 0 },
        { name: 'b', at: 100 + 1003 },
      ]);
    });

    it('cut before it was written (waiting for a connection): it never reached the server; settled at the cut', async () => {
      expect(await cutAt100('TIMEOUT', false)).toEqual([
        { name: 'a', at: 0 },
        { name: 'b', at: 100 + 1003 },
      ]);
    });
  });

  it('stop rejects queued attempts as INTERRUPTED and leaves started ones alone', async () => {
    const { mc, limiter, job, finish } = setup({ limit: 1, windowMs: 1000 });
    const a = job('a', false, false);
    const b = job('b');
    const armed = mc.armed();
    await limiter.stop();
    const err = await b.catch((e: unknown) => e);
    expect(isBreError(err) && err.code).toBe('INTERRUPTED');
    await finish('a');
    await expect(a).resolves.toBe('a');
    await expect(limiter.schedule(async () => 1)).rejects.toMatchObject({ code: 'INTERRUPTED' });
    await mc.advance(5000);
    // nothing was armed after the stop
    expect(mc.armed()).toBe(armed);
  });

  it('a job that throws synchronously rejects its own promise and frees its slot', async () => {
    const { limiter, job, started } = setup(null, 1);
    await expect(
      limiter.schedule(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await job('next');
    expect(started.map((s) => s.name)).toEqual(['next']);
  });
});
