import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter } from '../../src/limits/adaptive.js';

function limiter() {
  let t = 0;
  const l = new AdaptiveLimiter(
    { service: 'account', rate: { limit: 120, windowMs: 60_000 }, concurrency: 4 },
    { now: () => t },
  );
  return {
    l,
    tick: (ms: number) => {
      t += ms;
    },
  };
}

describe('adaptive (AIMD) account limiter', () => {
  it('probes upward by 10% of the start rate per step until the first 429', () => {
    const { l, tick } = limiter();
    for (let i = 0; i < 5; i += 1) {
      tick(5000);
      l.onSuccess();
    }
    expect(l.stats().currentPerMinute).toBe(180);
    expect(l.probing).toBe(true);
  });

  it('a 429 cuts the rate once per cool-down, then increases gently', () => {
    const { l, tick } = limiter();
    for (let i = 0; i < 10; i += 1) {
      tick(5000);
      l.onSuccess();
    }
    expect(l.stats().currentPerMinute).toBe(240);
    l.onThrottled();
    l.onThrottled();
    tick(1000);
    l.onThrottled();
    expect(l.stats().currentPerMinute).toBe(192);
    expect(l.probing).toBe(false);
    tick(5000);
    l.onSuccess();
    expect(l.stats().currentPerMinute).toBeCloseTo(195.8, 1);
    tick(10_000);
    l.onThrottled();
    expect(l.stats().currentPerMinute).toBeCloseTo(156.6, 1);
  });

  it('never goes below the floor nor above the ceiling', async () => {
    const { l, tick } = limiter();
    for (let i = 0; i < 100; i += 1) {
      tick(11_000);
      l.onThrottled();
    }
    expect(l.stats().currentPerMinute).toBe(6);
    for (let i = 0; i < 2000; i += 1) {
      tick(5000);
      l.onSuccess();
    }
    expect(l.stats().currentPerMinute).toBe(1200);
    await l.stop();
  });
});
