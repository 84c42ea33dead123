import { describe, expect, it } from 'vitest';
import { CATCH_UP_MS, marginFor, Pacer, PATH_SLACK_MS, pacingFor, startIntervalMs } from '../../src/limits/pacer.js';
import type { Rate } from '@bre-batch/core/rates';
import { SlidingWindow } from '@bre-batch/sandbox/rate';

const perSecond = (n: number): Rate => ({ limit: n, windowMs: 1000 });
const perMinute = (n: number): Rate => ({ limit: n, windowMs: 60_000 });

/** A deterministic pseudo-random number in [0, 1) for step i (no Math.random in tests). */
function noise(i: number): number {
  const x = Math.sin(i * 12.9898 + 78.233) * 43_758.5453;
  return x - Math.floor(x);
}

/** Where call i, started at `start`, went: ms until the server stamped it, and until its answer came back. */
interface Path {
  readonly reach: (i: number, start: number) => number;
  readonly answer: (i: number, start: number) => number;
}

/** Loopback: the server stamps a call 0-0.5 ms after its start, and answers 1 ms after that. */
const loopback: Path = { reach: (i) => noise(i) / 2, answer: (i) => noise(i) / 2 + 1 };

interface Run {
  readonly starts: number[];
  /** When the server stamped each call. */
  readonly arrivals: number[];
}

/**
 * A backlogged pacer driven as the limiter drives it: at each wake-up every due start goes (written at once,
 * answered as `path` says), then a timer is armed in whole ms for the next one and fires `late(at)` after its
 * time (a busy event loop). Answers due before the wake-up are delivered first.
 */
function run(rate: Rate, ms: number, late: (at: number) => number, path: Path = loopback): Run {
  const p = new Pacer(pacingFor(rate));
  const starts: number[] = [];
  const arrivals: number[] = [];
  const pending: { n: number; at: number }[] = [];
  let now = 0;
  while (now < ms) {
    for (let k = pending.length - 1; k >= 0; k -= 1) {
      if (pending[k].at > now) continue;
      p.answered(pending[k].n, pending[k].at);
      pending.splice(k, 1);
    }
    while (p.delay(now) <= 0) {
      const i = starts.length;
      const n = p.take(now, 0);
      p.sent(n, now);
      pending.push({ n, at: now + path.answer(i, now) });
      starts.push(now);
      arrivals.push(now + path.reach(i, now));
    }
    const next = Math.min(p.delay(now), ...pending.map((x) => x.at - now));
    const at = now + Math.max(1, Math.ceil(next));
    now = at + late(at);
  }
  return { starts, arrivals };
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

/** What the server's strict sliding window refuses of calls stamped at `arrivals`. */
function refusedByServer(arrivals: readonly number[], rate: Rate): number {
  const win = new SlidingWindow(rate.limit, rate.windowMs);
  return [...arrivals].sort((x, y) => x - y).filter((t) => win.hit(t) > 0).length;
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

describe('pacingFor: the margin is time per window, not a share of the rate', () => {
  it.each([
    ['1/min', 1, 60_000, perMinute(1)],
    ['500/min', 500, 60_000, perMinute(500)],
    ['100/s', 100, 1000, perSecond(100)],
    ['5000/s', 5000, 1000, perSecond(5000)],
    ['2.5/s (a counting window admits 3)', 3, 1000, perSecond(2.5)],
    ['200000/s (a log of 50,000 over a quarter window)', 50_000, 1000 / 4, perSecond(200_000)],
  ])(
    '%s: at most %i calls in any %d ms and the margin, spaced (window + margin) / limit',
    (_name, count, span, rate) => {
      const p = pacingFor(rate);
      const margin = marginFor(rate.windowMs);
      expect(p.guardCount).toBe(count);
      expect(p.guardSpanMs).toBeCloseTo(span + margin / (span < 1000 ? 4 : 1), 9);
      expect(p.intervalMs).toBeCloseTo((rate.windowMs + margin) / rate.limit, 9);
      expect(startIntervalMs(rate)).toBe(p.intervalMs);
      expect(p.catchUpMs).toBe(CATCH_UP_MS);
      expect(p.pathMs).toBe(PATH_SLACK_MS);
    },
  );

  it.each([
    // window, margin: whole-ms stamps and timers (2 ms) and 500 ppm of the window
    [1000, 2.5],
    [60_000, 32],
  ])('a window of %d ms keeps a margin of %d ms', (windowMs, margin) => {
    expect(marginFor(windowMs)).toBeCloseTo(margin, 9);
  });

  it('the documented limits lose under a tenth of a percent to the margin (was 1.5%), a one-second window a quarter', () => {
    expect(500 * startIntervalMs(perMinute(500))).toBeLessThan(60_000 * 1.001);
    expect(1000 * startIntervalMs(perMinute(1000))).toBeLessThan(60_000 * 1.001);
    expect(1000 / (5000 * startIntervalMs(perSecond(5000)))).toBeGreaterThan(0.997);
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
    const { starts, arrivals } = run(rate, ms, late);
    const p = pacingFor(rate);
    // the log's promise, on the actual start times, stall or no stall:
    expect(tightest(starts, p.guardCount)).toBeGreaterThanOrEqual(p.guardSpanMs);
    expect(share(starts, rate)).toBeGreaterThanOrEqual(minShare);
    expect(share(starts, rate)).toBeLessThanOrEqual(1);
    expect(refusedByServer(arrivals, rate)).toBe(0);
  });

  /** A server whose event loop stalls `ms` every `every` ms: what arrives meanwhile is stamped at the end. */
  const stalling = (ms: number, every: number) => (i: number, start: number) =>
    (start % every < ms ? ms - (start % every) : 0) + noise(i) / 2;
  it.each([
    // Cold calls reach the server up to 85 ms after their start (measured on the sandbox at 100/s), then on
    // time; each answer comes 2 ms after the call reached the server.
    ['a slow start-up', perSecond(100), (i: number) => (i < 10 ? 85 - i * 5 : 0), 0.97],
    // 5,000/s on two loaded cores: stalls longer than the 40 ms once assumed for the path's jitter (but under
    // the path bound, PATH_SLACK_MS: a call that no answer bounds is taken to have arrived by then).
    ['a server stalling 60 ms every 700 ms, at 5000/s', perSecond(5000), stalling(60, 700), 0.9],
    ['a server stalling 200 ms every 7 s, at 500/min', perMinute(500), stalling(200, 7000), 0.99],
  ])(
    'calls that reach the server late are logged at their answers: %s draws no 429',
    (_name, rate, reach, minShare) => {
      const path: Path = { reach, answer: (i, start) => reach(i, start) + 2 };
      const { starts, arrivals } = run(rate, rate.windowMs * 10, onTime, path);
      expect(refusedByServer(arrivals, rate)).toBe(0);
      expect(share(starts, rate)).toBeGreaterThanOrEqual(minShare);
      // Logged at the writes, with no time for the path (what the answers replaced), the same calls are refused.
      const atWrites: Path = { reach, answer: () => 0 };
      expect(refusedByServer(run(rate, rate.windowMs * 10, onTime, atWrites).arrivals, rate)).toBeGreaterThan(0);
    },
  );

  it('an unanswered call is logged pathMs after its write; its answer, when it comes sooner, moves it', () => {
    const rate = { limit: 2, windowMs: 1000 };
    const span = pacingFor(rate).guardSpanMs;
    const p = new Pacer(pacingFor(rate));
    const a = p.take(0, 0);
    const b = p.take(600, 0);
    // neither written nor answered: no bound at all
    expect(p.delay(5000)).toBe(Infinity);
    // written at 1 and not answered: it reached the server by 1 + PATH_SLACK_MS
    p.sent(a, 1);
    expect(p.delay(1100)).toBeCloseTo(1 + PATH_SLACK_MS + span - 1100, 9);
    // its answer came at 200: that is the bound now
    p.answered(a, 200);
    expect(p.delay(1100)).toBeCloseTo(200 + span - 1100, 9);
    // an answer later than the write's bound does not move it back
    p.sent(b, 601);
    p.answered(b, 601 + PATH_SLACK_MS + 500);
    expect(p.delay(1210)).toBeLessThanOrEqual(0);
    p.take(1210, 0);
    expect(p.delay(1300)).toBeCloseTo(601 + PATH_SLACK_MS + span - 1300, 9);
  });

  it('a call cut by this side: written, its entry stays at the write plus pathMs; never written, at the cut', () => {
    const rate = { limit: 1, windowMs: 1000 };
    const span = pacingFor(rate).guardSpanMs;
    const written = new Pacer(pacingFor(rate));
    const a = written.take(0, 0);
    written.sent(a, 1);
    written.cut(a, 50);
    expect(written.delay(0)).toBeCloseTo(1 + PATH_SLACK_MS + span, 9);
    // cut after the write's bound: the bound stays (the entry is never moved later)
    const late = new Pacer(pacingFor(rate));
    const b = late.take(0, 0);
    late.sent(b, 1);
    late.cut(b, 5000);
    expect(late.delay(0)).toBeCloseTo(1 + PATH_SLACK_MS + span, 9);
    const unsent = new Pacer(pacingFor(rate));
    const c = unsent.take(0, 0);
    expect(unsent.delay(10)).toBe(Infinity);
    unsent.cut(c, 30);
    expect(unsent.delay(0)).toBeCloseTo(30 + span, 9);
  });

  it('the path bound is --rate-slack', () => {
    const p = new Pacer(pacingFor({ limit: 1, windowMs: 1000 }, { pathMs: 40 }));
    p.sent(p.take(0, 0), 10);
    expect(p.delay(0)).toBeCloseTo(10 + 40 + pacingFor({ limit: 1, windowMs: 1000 }).guardSpanMs, 9);
  });

  it('no burst after an idle spell: the first start of a quiet limiter is one, the next one interval later', () => {
    const p = new Pacer(pacingFor(perSecond(10)));
    p.take(0, 0);
    expect(p.delay(0)).toBeCloseTo(100.25, 9);
    // idle for a minute: no credit is built up
    p.take(60_000, 60_000);
    expect(p.delay(60_000)).toBeCloseTo(100.25, 9);
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
