import { describe, expect, it } from 'vitest';
import { CATCH_UP_MS, COLD_PATH_MS, JITTER_SLACK_MS, Pacer, pacingFor, startIntervalMs, TIMER_SLACK_MS } from '../../src/limits/pacer.js';
import type { Rate } from '../../src/limits/rates.js';
import { SlidingWindow } from '../../src/sandbox/rate.js';

const SLACK = JITTER_SLACK_MS + TIMER_SLACK_MS;
const perSecond = (n: number): Rate => ({ limit: n, windowMs: 1000 });
const perMinute = (n: number): Rate => ({ limit: n, windowMs: 60_000 });

/** A deterministic pseudo-random number in [0, 1) for step i (no Math.random in tests). */
function noise(i: number): number {
  const x = Math.sin(i * 12.9898 + 78.233) * 43_758.5453;
  return x - Math.floor(x);
}

/**
 * A backlogged pacer driven as the limiter drives it: at each wake-up every due start goes, then a timer is
 * armed in whole ms for the next one and fires `late(at)` after its time (a busy event loop).
 */
function run(rate: Rate, ms: number, late: (at: number) => number, answerMs = 1): number[] {
  const p = new Pacer(pacingFor(rate));
  const starts: number[] = [];
  let now = 0;
  while (now < ms) {
    while (p.delay(now) <= 0) {
      // Written at once, answered `answerMs` later.
      const n = p.take(now, 0);
      p.sent(n, now);
      p.answered(n, now + answerMs);
      starts.push(now);
    }
    const at = now + Math.max(1, Math.ceil(p.delay(now)));
    now = at + late(at);
  }
  return starts;
}

/** Fewest ms between start i and start i + count, over the run. */
function tightest(starts: readonly number[], count: number): number {
  let min = Infinity;
  for (let i = 0; i + count < starts.length; i += 1) min = Math.min(min, starts[i + count] - starts[i]);
  return min;
}

/** Starts a second (or a minute) over first to last, as a share of the limit. */
function share(starts: readonly number[], rate: Rate): number {
  return ((starts.length - 1) / (starts[starts.length - 1] - starts[0])) * (rate.windowMs / rate.limit);
}

/** What the server's strict sliding window refuses when each start arrives `jitter(i)` ms later. */
function refusedByServer(starts: readonly number[], rate: Rate, jitter: (i: number) => number): number {
  const arrivals = starts.map((s, i) => s + jitter(i)).sort((a, b) => a - b);
  const win = new SlidingWindow(rate.limit, rate.windowMs);
  return arrivals.filter((a) => win.hit(a) > 0).length;
}

const onTime = () => 0;
const busy = (at: number) => Math.floor(noise(at) * 4); // 0-3 ms late, every wake-up
/** Wake-ups 0-1 ms late, and a 250 ms stall every 20 s. */
function stalls(): (at: number) => number {
  let next = 20_000;
  return (at) => {
    if (at < next) return Math.floor(noise(at) * 2);
    next += 20_000;
    return 250;
  };
}

describe('pacingFor: the slack is time per window, not a share of the rate', () => {
  it.each([
    ['1/min', 1, 60_000 + JITTER_SLACK_MS, perMinute(1)],
    ['500/min', 500, 60_000 + JITTER_SLACK_MS, perMinute(500)],
    ['100/s', 100, 1000 + JITTER_SLACK_MS, perSecond(100)],
    ['5000/s', 5000, 1000 + JITTER_SLACK_MS, perSecond(5000)],
    ['2.5/s (a counting window admits 3)', 3, 1000 + JITTER_SLACK_MS, perSecond(2.5)],
    ['200000/s (a log of 50,000 over a quarter window)', 50_000, (1000 + JITTER_SLACK_MS) / 4, perSecond(200_000)],
  ])('%s: at most %i starts in any %d ms, spaced (window + slack) / limit', (_name, count, span, rate) => {
    const p = pacingFor(rate);
    expect(p.guardCount).toBe(count);
    expect(p.guardSpanMs).toBeCloseTo(span, 9);
    expect(p.intervalMs).toBeCloseTo((rate.windowMs + SLACK) / rate.limit, 9);
    expect(startIntervalMs(rate)).toBe(p.intervalMs);
    expect(p.catchUpMs).toBe(CATCH_UP_MS);
  });

  it('the documented limits lose under a tenth of a percent to the slack (was 1.5%)', () => {
    expect(500 * startIntervalMs(perMinute(500))).toBeLessThan(60_000 * 1.001);
    expect(1000 * startIntervalMs(perMinute(1000))).toBeLessThan(60_000 * 1.001);
    // and a one-second window keeps 95%:
    expect(1000 / (5000 * startIntervalMs(perSecond(5000)))).toBeGreaterThan(0.95);
  });
});

describe('Pacer: every start that is due goes at each wake-up; never more than the limit in a window', () => {
  it.each([
    ['1/s on time', perSecond(1), 60_000, onTime, 0.95],
    ['100/s, wake-ups 0-3 ms late', perSecond(100), 20_000, busy, 0.95],
    ['1000/s, wake-ups 0-3 ms late', perSecond(1000), 10_000, busy, 0.95],
    ['5000/s, wake-ups 0-3 ms late', perSecond(5000), 5000, busy, 0.95],
    ['100000/s on time', perSecond(100_000), 3000, onTime, 0.95],
    ['500/min, wake-ups 0-3 ms late', perMinute(500), 600_000, busy, 0.993],
    ['1000/min, wake-ups 0-3 ms late', perMinute(1000), 600_000, busy, 0.993],
    ['500/min with a 250 ms stall every 20 s', perMinute(500), 600_000, stalls(), 0.985],
    ['5000/s with a 250 ms stall every 20 s', perSecond(5000), 60_000, stalls(), 0.94],
  ])('%s', (_name, rate, ms, late, minShare) => {
    const starts = run(rate, ms, late);
    const p = pacingFor(rate);
    // the log's promise, on the actual start times, stall or no stall:
    expect(tightest(starts, p.guardCount)).toBeGreaterThanOrEqual(p.guardSpanMs);
    expect(share(starts, rate)).toBeGreaterThanOrEqual(minShare);
    expect(share(starts, rate)).toBeLessThanOrEqual(1);
    // the server's strict window, with each call reaching it up to the jitter slack late, refuses none:
    expect(refusedByServer(starts, rate, (i) => noise(i) * JITTER_SLACK_MS * 0.999)).toBe(0);
  });

  it('the cold window: the first limit starts are guarded by their answers, so a slow start-up draws no 429', () => {
    const rate = perSecond(100);
    // Cold calls reach the server up to 85 ms after their start (measured on the sandbox), then on time;
    // each answer comes 2 ms after the call reached the server.
    const slowStart = (i: number) => (i < 10 ? 85 - i * 5 : 0);
    const p = new Pacer(pacingFor(rate));
    const starts: number[] = [];
    let now = 0;
    while (now < 5000) {
      while (p.delay(now) <= 0) {
        const n = p.take(now, 0);
        p.sent(n, now);
        p.answered(n, now + slowStart(starts.length) + 2);
        starts.push(now);
      }
      now += Math.max(1, Math.ceil(p.delay(now)));
    }
    expect(refusedByServer(starts, rate, slowStart)).toBe(0);
    expect(share(starts, rate)).toBeGreaterThanOrEqual(0.95);
    // Guarded by the times the cold window's requests were written instead, the same start-up is refused.
    const byWrite = new Pacer(pacingFor(rate));
    const early: number[] = [];
    for (now = 0; now < 5000; now += Math.max(1, Math.ceil(byWrite.delay(now)))) {
      while (byWrite.delay(now) <= 0) {
        const n = byWrite.take(now, 0);
        byWrite.answered(n, now);
        early.push(now);
      }
    }
    expect(refusedByServer(early, rate, slowStart)).toBeGreaterThan(0);
  });

  it('the cold window waits for answers (at most COLD_PATH_MS after the write); later windows for the writes', () => {
    const p = new Pacer(pacingFor({ limit: 2, windowMs: 1000 }));
    const a = p.take(0, 0);
    const b = p.take(600, 0);
    // neither written nor answered: no bound at all
    expect(p.delay(5000)).toBe(Infinity);
    // written at 1 and not answered: it reached the server by 1 + COLD_PATH_MS
    p.sent(a, 1);
    expect(p.delay(1500)).toBeCloseTo(1 + COLD_PATH_MS + 1040 - 1500, 9);
    // its answer came at 30: that is the bound now
    p.answered(a, 30);
    expect(p.delay(1500)).toBeLessThanOrEqual(0);
    p.sent(b, 601);
    p.answered(b, 602);
    const c = p.take(6040, 0);
    expect(p.delay(7100)).toBeLessThanOrEqual(0);
    p.take(7100, 0);
    // the next start needs c's entry: c's request is not written yet
    expect(p.delay(7100)).toBe(Infinity);
    // After the cold window, the write settles the entry (here held 960 ms in the client before it went
    // out): the answer does not move it.
    p.sent(c, 7000);
    p.answered(c, 9000);
    expect(p.delay(7100)).toBeCloseTo(7000 + 1040 - 7100, 9);
  });

  it('no burst after an idle spell: the first start of a quiet limiter is one, the next one interval later', () => {
    const p = new Pacer(pacingFor(perSecond(10)));
    p.take(0, 0);
    expect(p.delay(0)).toBeCloseTo(104.5, 9);
    // idle for a minute: no credit is built up
    p.take(60_000, 60_000);
    expect(p.delay(60_000)).toBeCloseTo(104.5, 9);
  });

  it('a late wake-up catches up by at most tau', () => {
    const p = new Pacer(pacingFor(perSecond(1000)));
    p.take(0, 0);
    // woken 200 ms late with a backlog: the starts of the last tau go at once, then the spacing resumes
    let now = 200;
    let burst = 0;
    while (p.delay(now) <= 0) {
      p.take(now, 0);
      burst += 1;
    }
    expect(burst).toBe(Math.floor(CATCH_UP_MS / startIntervalMs(perSecond(1000))) + 1);
    now += p.delay(now);
    expect(p.delay(now)).toBeLessThanOrEqual(0);
  });

  it('a new rate keeps the latest starts in the log and spaces the next start at the new interval', () => {
    const p = new Pacer(pacingFor(perMinute(120)));
    for (let t = 0; t < 5; t += 1) p.take(t * 500, 0);
    const slower = pacingFor(perMinute(60));
    const last = p.delay(2000) + 2000 - pacingFor(perMinute(120)).intervalMs;
    p.setPacing(slower);
    expect(p.delay(2000) + 2000).toBeCloseTo(last + slower.intervalMs, 9);
    expect(p.pacing).toBe(slower);
  });
});
