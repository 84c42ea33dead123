import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/limits/in-flight.js';
import { PacedLimiter } from '../../src/limits/paced.js';
import { manualClock } from '../helpers/clock.js';

/** 1000/min, as the bureau service's documented limit. */
const PER_MS = 1000 / 60_000;

describe("InFlight: calls in flight follow the latency (Little's law) up to the bound", () => {
  it('sizes the cap as rate x mean latency x 1.25 once answers come', () => {
    const f = new InFlight({ perMs: PER_MS, bound: 10_000 });
    for (let i = 0; i < 50; i += 1) f.finished(f.started(i * 60), i * 60 + 20_000);
    // 16.7/s x 20 s x 1.25 = 417, plus one
    expect(f.cap(50 * 60 + 20_000)).toBe(418);
    expect(f.meanLatencyMs).toBe(20_000);
  });

  it('before any answer, grows as the oldest call in flight ages: never below the calls the limit needs', () => {
    const f = new InFlight({ perMs: PER_MS, bound: 10_000 });
    for (let t = 0; t <= 30_000; t += 60) {
      // the limit's pace: one start every 60 ms, none answered yet; the cap stays above the calls in flight
      expect(f.cap(t)).toBeGreaterThan(f.running);
      f.started(t);
    }
  });

  it('never above the bound; says when the bound holds starts back and what the latency asked for', () => {
    const f = new InFlight({ perMs: PER_MS, bound: 167 });
    let t = 0;
    for (; f.running < 167; t += 60) f.started(t);
    expect(f.cap(t)).toBe(167);
    expect(f.growsAt(t)).toBe(Infinity);
    t = 20_000;
    f.held(t);
    f.held(t + 500);
    expect(f.boundHolding(t + 500)).toBe(true);
    expect(f.boundHeldMs).toBe(500);
    expect(f.wantedAtHold).toBeGreaterThan(167);
    expect(f.boundHolding(t + 5000)).toBe(false);
  });

  it('answers slower than a second: holds that come in waves one answer apart count as held throughout', () => {
    // 20 calls a second, answers of 1.5 s, --concurrency 4: the cap frees slots only as answers come.
    const f = new InFlight({ perMs: 20 / 1000, bound: 4 });
    let t = 0;
    const flights = [0, 1, 2, 3].map((i) => f.started(i * 50));
    for (let wave = 1; wave <= 10; wave += 1) {
      t = wave * 1500;
      for (const fl of flights.splice(0)) f.finished(fl, t);
      for (let i = 0; i < 4; i += 1) flights.push(f.started(t + i * 50));
      f.held(t + 150);
    }
    expect(f.boundHeldMs).toBe(9 * 1500);
    expect(f.boundHolding(t + 2000)).toBe(true);
    expect(f.boundHolding(t + 3500)).toBe(false);
  });

  it('a fast service needs few calls in flight: the floor, not rate x time-out', () => {
    const f = new InFlight({ perMs: PER_MS, bound: 626 });
    for (let i = 0; i < 100; i += 1) f.finished(f.started(i * 60), i * 60 + 50);
    expect(f.cap(6000)).toBe(8);
  });

  it('without a rate the bound is the cap', () => {
    const f = new InFlight({ perMs: null, bound: 64 });
    expect(f.cap(0)).toBe(64);
  });
});

describe("PacedLimiter with answers of 20 s: starts keep the limit's pace unless the bound holds them", () => {
  async function run(bound: number) {
    const mc = manualClock();
    const limiter = new PacedLimiter({
      service: 'bureau',
      rate: { limit: 1000, windowMs: 60_000 },
      concurrency: bound,
      clock: mc.clock,
    });
    const starts: number[] = [];
    // `sent`: the request is written at once (the pacer's log then bounds when the server counted it)
    const job = () =>
      limiter.schedule((sent) => {
        starts.push(mc.now());
        sent();
        return new Promise<void>((resolve) => mc.clock.setTimer(resolve, 20_000));
      });
    for (let i = 0; i < 1500; i += 1) void job();
    for (let s = 0; s < 90; s += 1) await mc.advance(1000);
    return { starts, limiter };
  }

  it('the default bound (rate x 30 s time-out x 1.25): at least 99% of the limit from the first start', async () => {
    const { starts, limiter } = await run(626);
    const inMinute = starts.filter((t) => t >= 30_000 && t < 90_000).length;
    expect(inMinute).toBeGreaterThanOrEqual(990);
    expect(starts.filter((t) => t < 60_000).length).toBeGreaterThanOrEqual(990);
    expect(limiter.inFlight!().boundHeldMs).toBe(0);
  });

  it('a bound of 167 (rate x 10 s) holds it near half, and says so', async () => {
    const { starts, limiter } = await run(167);
    const inMinute = starts.filter((t) => t >= 30_000 && t < 90_000).length;
    expect(inMinute).toBeLessThan(600);
    const view = limiter.inFlight!();
    expect(view.bound).toBe(167);
    expect(view.boundHolding).toBe(true);
    expect(view.boundHeldMs).toBeGreaterThan(30_000);
    expect(view.wantedAtHold).toBeGreaterThanOrEqual(418);
  });
});
