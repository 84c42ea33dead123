/** `run`'s limits and network options (src/cli/run-options/limits.ts): --rate, --rate-slack, --concurrency, --timeout, --max-attempts, --redis, --local-address. */
import { describe, expect, it } from 'vitest';
import { fakeContext, refusal, resolveArgs } from './parse.js';

describe('--rate', () => {
  it('defaults to the documented limits', () => {
    expect(resolveArgs([]).settings.rates).toEqual({
      workflow: { limit: 500, windowMs: 60_000 },
      bureau: { limit: 1000, windowMs: 60_000 },
      account: expect.objectContaining({ limit: 120, windowMs: 60_000 }),
    });
  });

  it('takes SERVICE=N/UNIT, SERVICE=off and off, repeatable', () => {
    expect(resolveArgs(['--rate', 'workflow=10/s', '--rate', 'bureau=off']).settings.rates).toMatchObject({
      workflow: { limit: 10, windowMs: 1000 },
      bureau: null,
    });
    expect(resolveArgs(['--rate', 'off']).settings.rates).toEqual({ workflow: null, bureau: null, account: null });
  });

  it('refuses an unknown service', () => {
    expect(refusal(['--rate', 'bre=5/s'])).toMatchObject({ code: 'USAGE', message: expect.stringContaining('bre') });
  });
});

describe('--rate-slack', () => {
  it('defaults to 250 ms; a bare number is ms', () => {
    expect(resolveArgs([]).settings.rateSlackMs).toBe(250);
    expect(resolveArgs(['--rate-slack', '400']).settings.rateSlackMs).toBe(400);
    expect(resolveArgs(['--rate-slack', '1s']).settings.rateSlackMs).toBe(1000);
  });
});

describe('--concurrency', () => {
  it('is sized from the rate and the time-out by default (rate x time-out x 1.25; 64 with no limit)', () => {
    expect(resolveArgs([]).settings.concurrency).toEqual({ workflow: 626, bureau: 626, account: 151 });
    expect(resolveArgs(['--timeout', 'bureau=15s']).settings.concurrency.bureau).toBe(314);
    expect(resolveArgs(['--rate', 'off']).settings.concurrency).toEqual({ workflow: 64, bureau: 64, account: 64 });
  });

  it('is the same for every service when given', () => {
    expect(resolveArgs(['--concurrency', '3']).settings.concurrency).toEqual({ workflow: 3, bureau: 3, account: 3 });
  });

  it.each(['0', '1.5', 'many'])('refuses %s, quoted as given', (given) => {
    expect(refusal(['--concurrency', given])).toEqual({
      code: 'USAGE',
      message: `Expected --concurrency to be a whole number >= 1, got '${given}'`,
    });
  });
});

describe('--timeout', () => {
  it('defaults to workflow 60 s, bureau 30 s, account 60 s', () => {
    expect(resolveArgs([]).settings.timeoutsMs).toEqual({ workflow: 60_000, bureau: 30_000, account: 60_000 });
  });

  it('takes SERVICE=DURATION, or DURATION for all', () => {
    expect(resolveArgs(['--timeout', 'bureau=45s']).settings.timeoutsMs).toEqual({
      workflow: 60_000,
      bureau: 45_000,
      account: 60_000,
    });
    expect(resolveArgs(['--timeout', '5s']).settings.timeoutsMs).toEqual({
      workflow: 5000,
      bureau: 5000,
      account: 5000,
    });
  });

  it('refuses 0', () => {
    expect(refusal(['--timeout', 'bureau=0s']).message).toMatch(/Expected --timeout to be a duration of more than 0/);
  });
});

describe('--max-attempts', () => {
  it('defaults to 6', () => {
    expect(resolveArgs([]).settings.maxAttempts).toBe(6);
    expect(resolveArgs(['--max-attempts', '1']).settings.maxAttempts).toBe(1);
  });

  it.each(['0', 'abc'])('refuses %s, quoted as given', (given) => {
    expect(refusal(['--max-attempts', given])).toEqual({
      code: 'USAGE',
      message: `Expected --max-attempts to be a whole number >= 1, got '${given}'`,
    });
  });
});

describe('--redis', () => {
  it('is the URL given; none by default', () => {
    expect(resolveArgs([]).settings.redisUrl).toBeUndefined();
    expect(resolveArgs(['--redis', 'redis://10.0.0.2:6379']).settings.redisUrl).toBe('redis://10.0.0.2:6379');
  });
});

describe('--local-address', () => {
  it('is unset by default, and read from BRE_LOCAL_ADDRESSES in the context', () => {
    expect(resolveArgs([]).settings.localAddresses).toBeUndefined();
    expect(
      resolveArgs([], fakeContext({ env: { BRE_LOCAL_ADDRESSES: '10.0.0.5 10.0.0.6,10.0.0.5' } })).settings
        .localAddresses,
    ).toEqual(['10.0.0.5', '10.0.0.6']);
  });

  it('wins over the environment: repeatable or comma-separated, each once', () => {
    const ctx = fakeContext({ env: { BRE_LOCAL_ADDRESSES: '10.0.0.9' } });
    expect(
      resolveArgs(['--local-address', '127.0.0.1,::1', '--local-address', '127.0.0.1'], ctx).settings.localAddresses,
    ).toEqual(['127.0.0.1', '::1']);
  });

  it('refuses what is no IP address', () => {
    expect(refusal(['--local-address', 'eth0'])).toEqual({
      code: 'USAGE',
      message: "Expected --local-address to be an IP address of this machine (e.g. 10.0.0.5), got 'eth0'",
    });
  });
});
