import { describe, expect, it } from 'vitest';
import { backoffDelayMs, parseRetryAfter } from '../../src/limits/backoff.js';
import { parseDuration, parseRateArg, parseServiceDurations, resolveRates } from '@bre-batch/core/units';
import { defaultConcurrency } from '../../src/limits/limiter.js';
import { describeRate } from '@bre-batch/core/rates';

describe('documented backoff: base 1 s, doubled, capped at 60 s, +-20% jitter', () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [6, 32_000],
    [7, 60_000],
    [12, 60_000],
  ])('attempt %i without jitter waits %i ms', (attempt, ms) => {
    expect(backoffDelayMs(attempt, undefined, { random: () => 0.5 })).toBe(ms);
  });
  it('jitter stays within +-20%', () => {
    expect(backoffDelayMs(3, undefined, { random: () => 0 })).toBe(3200);
    expect(backoffDelayMs(3, undefined, { random: () => 1 })).toBe(4800);
  });
  it('a longer Retry-After wins; a shorter one (0 included) never shortens the documented backoff', () => {
    expect(backoffDelayMs(1, 7)).toBe(7000);
    expect(backoffDelayMs(1, 0, { random: () => 0.5 })).toBe(1000);
    expect(backoffDelayMs(4, 2, { random: () => 0.5 })).toBe(8000);
    expect(backoffDelayMs(1, 600, { random: () => 0.5 })).toBe(60_000);
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:05 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(5);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('--rate', () => {
  it.each([
    ['workflow=500/min', { service: 'workflow', rate: { limit: 500, windowMs: 60_000 } }],
    ['bureau=20/s', { service: 'bureau', rate: { limit: 20, windowMs: 1000 } }],
    ['account=off', { service: 'account', rate: null }],
  ])('%s', (arg, expected) => expect(parseRateArg(arg)).toEqual(expected));
  it.each(['workflow', 'work=5/min', 'workflow=0/min', 'workflow=5/hour'])('rejects %s with Expected/got', (arg) => {
    expect(() => parseRateArg(arg)).toThrow(/Expected .*got/);
  });
  it("durations: ms, s, m or min; a bare number in the flag's unit; SERVICE=DURATION per service", () => {
    expect(parseDuration('1500ms', { flag: 'x', unit: 's' })).toBe(1500);
    expect(parseDuration('30', { flag: 'x', unit: 's' })).toBe(30_000);
    expect(parseDuration('30', { flag: 'x', unit: 'ms' })).toBe(30);
    expect(parseDuration('2m', { flag: 'x', unit: 'ms' })).toBe(120_000);
    expect(() => parseDuration('soon', { flag: 'stop-grace', unit: 's' })).toThrow(
      /^Expected --stop-grace to be a duration of at least 0 .*got 'soon'$/,
    );
    const defaults = { workflow: 60_000, bureau: 30_000, account: 60_000 };
    expect(parseServiceDurations(['bureau=5s'], 'timeout', defaults)).toEqual({ ...defaults, bureau: 5000 });
    expect(parseServiceDurations(['2s'], 'timeout', defaults)).toEqual({ workflow: 2000, bureau: 2000, account: 2000 });
    expect(() => parseServiceDurations(['bureau=0s'], 'timeout', defaults)).toThrow(
      /Expected --timeout to be a duration of more than 0/,
    );
    expect(() => parseServiceDurations(['teller=5s'], 'timeout', defaults)).toThrow(
      /Expected --timeout SERVICE to be one of workflow, bureau, account, got 'teller'/,
    );
  });
  it.each([
    [{ limit: 500, windowMs: 60_000 }, '500/min'],
    [{ limit: 20, windowMs: 1000 }, '20/s'],
    [{ limit: 5, windowMs: 2000 }, '2.5/s'],
    [{ limit: 1, windowMs: 120_000 }, '0.5/min'],
    [null, 'off'],
  ])('describeRate(%j) = %s, which --rate reads back', (rate, text) => {
    expect(describeRate(rate)).toBe(text);
    if (rate)
      expect(
        (parseRateArg(`workflow=${text}`).rate!.limit * 60_000) / parseRateArg(`workflow=${text}`).rate!.windowMs,
      ).toBeCloseTo((rate.limit * 60_000) / rate.windowMs, 6);
  });
  it('defaults are the documented limits; `off` turns all off', () => {
    expect(resolveRates([]).workflow).toEqual({ limit: 500, windowMs: 60_000 });
    expect(resolveRates([]).bureau).toEqual({ limit: 1000, windowMs: 60_000 });
    expect(Object.values(resolveRates(['off']))).toEqual([null, null, null]);
  });
  it('the bound on calls in flight is rate x time-out with a margin (no answer outlasts its time-out)', () => {
    expect(defaultConcurrency({ limit: 500, windowMs: 60_000 }, 60_000)).toBe(626);
    expect(defaultConcurrency({ limit: 1000, windowMs: 60_000 }, 30_000)).toBe(626);
    expect(defaultConcurrency({ limit: 1, windowMs: 60_000 }, 30_000)).toBe(8);
    expect(defaultConcurrency({ limit: 5000, windowMs: 1000 }, 60_000)).toBe(4096);
    expect(defaultConcurrency(null, 30_000)).toBe(64);
  });
});
