import { describe, expect, it } from 'vitest';
import { Throttle } from '../../src/limits/throttle.js';

describe('Throttle: a service refusing with 429s backs off as the spec says, whatever Retry-After says', () => {
  const mid = () => 0.5;

  it('Retry-After: 0 never shortens the documented back-off: 1 s, 2 s, 4 s ... up to 60 s, one step a pause', () => {
    const t = new Throttle({ random: mid });
    let now = 0;
    const pauses: number[] = [];
    for (let i = 0; i < 9; i += 1) {
      const ms = t.refused(now, 1000 + now, 0);
      pauses.push(ms);
      now += ms;
    }
    expect(pauses).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(t.pauses).toBe(9);
  });

  it('a longer Retry-After wins (up to the cap); the jitter stays within +-20%', () => {
    expect(new Throttle({ random: mid }).refused(0, 0, 7)).toBe(7000);
    expect(new Throttle({ random: mid }).refused(0, 0, 3600)).toBe(60_000);
    expect(new Throttle({ random: () => 0 }).refused(0, 0, 0)).toBe(800);
    expect(new Throttle({ random: () => 1 }).refused(0, 0)).toBe(1200);
  });

  it('429s answered during a pause (attempts sent before it) are the same refusal: no longer pause', () => {
    const t = new Throttle({ random: mid });
    expect(t.refused(0, 0, 0)).toBe(1000);
    expect(t.refused(300, 300, 0)).toBe(700);
    expect(t.refused(999, 999)).toBe(1);
    expect(t.pauses).toBe(1);
    expect(t.refusals).toBe(3);
    // a longer Retry-After still moves the end
    expect(t.refused(999, 999, 5)).toBe(5000);
  });

  it('knows since when the service has refused everything; an answer ends the spell and the steps start again', () => {
    const t = new Throttle({ random: mid });
    expect(t.since).toBeNull();
    t.refused(0, 5000, 0);
    t.refused(1000, 6000, 0);
    expect(t.since).toBe(5000);
    expect(t.streak).toBe(2);
    t.answered();
    expect(t.since).toBeNull();
    expect(t.refused(3000, 8000, 0)).toBe(1000);
    expect(t.since).toBe(8000);
  });
});
