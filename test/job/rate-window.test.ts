/**
 * A job worker's rate as its heartbeat reports it (src/job/rate-window.ts), on a given clock: counted from the
 * first row it handed its run, so the time it spent starting is not taken for slowness (an early `job status`
 * gave an ETA twice the truth), then over the last minute.
 */
import { describe, expect, it } from 'vitest';
import { RateWindow } from '../../src/job/rate-window.js';

describe("a worker's rate", () => {
  it('nothing before the first row; from the first row, not from the start', () => {
    const w = new RateWindow();
    // The first heartbeat, at the worker's start, before any row.
    expect(w.rate(0, 0)).toBe(0);
    // Its first row 5 s in; 40 rows at 8 a second by the next heartbeat, 10 s after the start.
    w.start(5_000);
    expect(w.rate(10_000, 40)).toBe(8);
  });

  it('over the last minute: a slower pace shows within a minute, not diluted by the whole run', () => {
    const w = new RateWindow();
    w.start(0);
    let done = 0;
    for (let t = 10_000; t <= 120_000; t += 10_000) expect(w.rate(t, (done += 80))).toBe(8);
    // Then 4 a second for a minute: the rate is the last minute's.
    for (let t = 130_000; t <= 180_000; t += 10_000) w.rate(t, (done += 40));
    expect(w.rate(190_000, (done += 40))).toBe(4);
  });

  it('a second start does not move the first row', () => {
    const w = new RateWindow();
    w.start(1_000);
    w.start(9_000, 50);
    expect(w.rate(11_000, 100)).toBe(10);
  });
});
