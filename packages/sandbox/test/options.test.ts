import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { sandboxBanner } from '../src/banner.js';
import { allowChecker, parseCidr } from '../src/cidr.js';
import {
  parseCallerRates,
  parseFaultSpec,
  parseRateSpecs,
  parseSandboxFlags,
  validateCallerRates,
  validateFaults,
  validateThrottle,
} from '../src/options.js';
import { SlidingWindow, retryAfterSeconds } from '../src/rate.js';
import { SANDBOX_LIMITS } from '../src/index.js';

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('USAGE');
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('--rate', () => {
  it.each([
    [['workflow=5/s'], { workflow: { limit: 5, windowMs: 1000 } }],
    [['bureau=1000/min'], { bureau: { limit: 1000, windowMs: 60_000 } }],
    [['account=off'], { account: null }],
    [['off'], { workflow: null, bureau: null, account: null }],
    [['off', 'workflow=2/s'], { workflow: { limit: 2, windowMs: 1000 }, bureau: null, account: null }],
    [['WORKFLOW=3/MIN'], { workflow: { limit: 3, windowMs: 60_000 } }],
    [['workflow=2.5/s'], { workflow: { limit: 5, windowMs: 2000 } }],
    [['account=0.5/s'], { account: { limit: 1, windowMs: 2000 } }],
    // The grammar `run --rate` takes (packages/core/src/units.ts): m and minute for min, sec and second for s.
    [['workflow=500/m'], { workflow: { limit: 500, windowMs: 60_000 } }],
    [['bureau = 20 / second'], { bureau: { limit: 20, windowMs: 1000 } }],
  ])('%j -> %j', (specs, expected) => {
    expect(parseRateSpecs(specs)).toEqual(expected);
  });

  it.each([
    [
      'workflow=5/hour',
      "Expected --rate SERVICE=N/UNIT (UNIT s or min, e.g. workflow=500/min), SERVICE=off or off, got 'workflow=5/hour'",
    ],
    ['teller=5/s', "Expected --rate SERVICE to be one of workflow, bureau, account, got 'teller'"],
    ['workflow=0/s', "Expected --rate workflow to be more than 0 requests per unit, got '0'"],
    [
      'workflow',
      "Expected --rate SERVICE=N/UNIT (UNIT s or min, e.g. workflow=500/min), SERVICE=off or off, got 'workflow'",
    ],
  ])('rejects %s', (spec, message) => {
    expect(usageMessage(() => parseRateSpecs([spec]))).toBe(message);
  });
});

describe('--faults', () => {
  it('parses kinds and probabilities', () => {
    expect(parseFaultSpec('429=0.05,503=0.02,reset=0.01,slow=0.01,malformed=0.01')).toEqual({
      '429': 0.05,
      '503': 0.02,
      reset: 0.01,
      slow: 0.01,
      malformed: 0.01,
    });
    expect(parseFaultSpec('none')).toEqual({});
  });
  it.each([
    ['429=2', 'Expected a probability between 0 and 1 for fault 429, got 2'],
    [
      'teapot=0.1',
      "Expected a fault kind among 429, 503, reset, slow, malformed, empty, html, trickle, endless, got 'teapot'",
    ],
    ['429=0.6,503=0.6', 'Expected fault probabilities summing to at most 1, got 1.2'],
    ['429:0.1', "Expected --faults KIND=PROBABILITY[,KIND=PROBABILITY...] (e.g. 429=0.05,503=0.02), got '429:0.1'"],
  ])('rejects %s', (spec, message) => {
    expect(usageMessage(() => parseFaultSpec(spec))).toBe(message);
  });
  it('validates objects from the control path', () => {
    expect(usageMessage(() => validateFaults({ slow: -1 }))).toBe(
      'Expected a probability between 0 and 1 for fault slow, got -1',
    );
  });
});

describe('sandbox flags', () => {
  it('applies defaults and parses every flag', () => {
    expect(parseSandboxFlags({})).toEqual({
      port: 0,
      host: '127.0.0.1',
      rate: {},
      latencyMs: 0,
      faults: {},
      seed: undefined,
      allow: undefined,
      bsaReadyAfterMs: undefined,
      slowMs: undefined,
    });
    const f = parseSandboxFlags({
      port: '8080',
      rate: ['off'],
      'latency-ms': '25',
      faults: '503=0.5',
      seed: 'abc',
      allow: ['10.0.0.0/8,::1'],
      'bsa-ready-after': '0',
      'slow-ms': '100',
      'trickle-ms': '2s',
    });
    expect(f).toMatchObject({
      port: 8080,
      latencyMs: 25,
      faults: { '503': 0.5 },
      seed: 'abc',
      allow: ['10.0.0.0/8', '::1'],
      bsaReadyAfterMs: 0,
      slowMs: 100,
      trickleMs: 2000,
    });
    expect(f.rate).toEqual({ workflow: null, bureau: null, account: null });
    expect(parseSandboxFlags({ seed: '42' }).seed).toBe(42);
  });
  it('--throttle-for and --throttle-retry-after: a gateway throttling every call for a while', () => {
    expect(parseSandboxFlags({ 'throttle-for': '20s' }).throttle).toEqual({ forMs: 20_000, retryAfter: 0 });
    expect(parseSandboxFlags({ 'throttle-for': '1m', 'throttle-retry-after': '3' }).throttle).toEqual({
      forMs: 60_000,
      retryAfter: 3,
    });
    expect(parseSandboxFlags({}).throttle).toBeUndefined();
    expect(usageMessage(() => parseSandboxFlags({ 'throttle-for': '5s', 'throttle-retry-after': '0.5' }))).toBe(
      "Expected --throttle-retry-after to be a whole number of seconds >= 0, got '0.5'",
    );
    expect(usageMessage(() => validateThrottle({ forMs: -1 }))).toBe(
      'Expected {"forMs": a number >= 0, "retryAfter": seconds >= 0}, got {"forMs":-1}',
    );
  });
  it.each([
    [{ port: '70000' }, "Expected --port to be a whole number from 0 to 65535, got '70000'"],
    [
      { 'latency-ms': '-5' },
      "Expected --latency-ms to be a duration of at least 0 (1500ms, 30s, 2m; a bare number is milliseconds), got '-5'",
    ],
    [
      { 'bsa-ready-after': '2 hours' },
      "Expected --bsa-ready-after to be a duration of at least 0 (1500ms, 30s, 2m; a bare number is milliseconds), got '2 hours'",
    ],
    [
      { allow: ['300.1.1.1'] },
      "Expected --allow to be an IP address or CIDR block (e.g. 10.0.0.0/8 or ::1), got '300.1.1.1'",
    ],
  ])('rejects %j', (flags, message) => {
    expect(usageMessage(() => parseSandboxFlags(flags))).toBe(message);
  });
});

describe('--caller-rate', () => {
  it('gives single caller addresses their own limits, in the grammar of --rate', () => {
    expect(
      parseSandboxFlags({
        'caller-rate': [
          '127.0.0.4:workflow=7.5/s',
          '[::1]:bureau=off',
          '127.0.0.4:bureau=2/s',
          '[::ffff:127.0.0.5]:off',
        ],
      }).callerRates,
    ).toEqual({
      '127.0.0.4': { workflow: { limit: 15, windowMs: 2000 }, bureau: { limit: 2, windowMs: 1000 } },
      '::1': { bureau: null },
      '127.0.0.5': { workflow: null, bureau: null, account: null },
    });
    expect(parseSandboxFlags({}).callerRates).toBeUndefined();
    expect(validateCallerRates({ '127.0.0.3': { workflow: { limit: 2.5, windowMs: 1000 }, account: null } })).toEqual({
      '127.0.0.3': { workflow: { limit: 5, windowMs: 2000 }, account: null },
    });
  });
  it.each([['workflow=5/s'], ['10.0.0.0/8:workflow=5/s'], ['::1:workflow=5/s'], ['300.1.1.1:workflow=5/s']])(
    'rejects %s',
    (spec) => {
      expect(usageMessage(() => parseCallerRates([spec]))).toBe(
        `Expected --caller-rate ADDR:SERVICE=N/UNIT (e.g. 127.0.0.3:workflow=250/min; an IPv6 address in brackets), got '${spec}'`,
      );
    },
  );
  it('rejects a rate the --rate grammar refuses, and objects of another shape', () => {
    expect(usageMessage(() => parseCallerRates(['127.0.0.3:workflow=fast']))).toMatch(/^Expected /);
    expect(usageMessage(() => validateCallerRates({ '127.0.0.3': { ledger: null } }))).toBe(
      "Expected a service among workflow, bureau, account, got 'ledger'",
    );
    expect(usageMessage(() => validateCallerRates({ '10.0.0.0/8': {} }))).toMatch(/^Expected callerRates as /);
  });
});

describe('allow-list (CIDR)', () => {
  const check = (list: string[], ip: string) => allowChecker(list.map((c) => parseCidr(c)!))(ip);
  it.each([
    [['127.0.0.0/8', '::1'], '127.0.0.1', true],
    [['127.0.0.0/8', '::1'], '127.8.9.10', true],
    [['127.0.0.0/8', '::1'], '::ffff:127.0.0.1', true],
    [['127.0.0.0/8', '::1'], '::1', true],
    [['127.0.0.0/8', '::1'], '10.1.2.3', false],
    [['10.0.0.0/8'], '127.0.0.1', false],
    [['10.0.0.0/8'], '10.255.0.1', true],
    [['192.168.1.7'], '192.168.1.7', true],
    [['192.168.1.7'], '192.168.1.8', false],
    [['fe80::/10'], 'fe80::1%eth0', true],
    [['2001:db8::/32'], '2001:db8:ffff::1', true],
    [['2001:db8::/32'], '2001:db9::1', false],
    [['0.0.0.0/0'], '8.8.8.8', true],
  ])('%j allows %s: %s', (list, ip, ok) => {
    expect(check(list, ip)).toBe(ok);
  });
  it.each(['10.0.0.0/33', '1.2.3', 'fe80::1::2', 'abc', '10.0.0.0/8/1'])('rejects malformed %s', (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

describe('sliding window', () => {
  it('admits exactly `limit` per window and frees slots as arrivals age out', () => {
    const w = new SlidingWindow(3, 1000);
    expect([w.hit(0), w.hit(100), w.hit(200)]).toEqual([0, 0, 0]);
    expect(w.hit(300)).toBe(700); // the arrival at 0 leaves the window at 1000
    expect(w.hit(999)).toBe(1);
    expect(w.hit(1000)).toBe(0); // now - 0 >= 1000: out of the window
    expect(w.hit(1050)).toBe(50); // refused requests never entered: 100, 200, 1000 are inside
    expect(w.hit(1100)).toBe(0);
    expect(w.count).toBe(3);
  });
  it('never admits more than `limit` in any window (randomised arrivals)', () => {
    const w = new SlidingWindow(10, 1000);
    const admitted: number[] = [];
    let t = 0;
    for (let i = 0; i < 5000; i++) {
      t += Math.floor(Math.random() * 40);
      if (w.hit(t) === 0) admitted.push(t);
    }
    for (let i = 10; i < admitted.length; i++) expect(admitted[i] - admitted[i - 10]).toBeGreaterThanOrEqual(1000);
  });
  it('counts without limit when the rate is off', () => {
    const w = new SlidingWindow(null, 1000);
    for (let i = 0; i < 200; i++) expect(w.hit(i)).toBe(0);
    expect(w.count).toBe(200);
    w.hit(1150);
    expect(w.count).toBe(50);
  });
  it('rounds Retry-After up to whole seconds, at least 1', () => {
    expect([retryAfterSeconds(1), retryAfterSeconds(1000), retryAfterSeconds(1001), retryAfterSeconds(59_999)]).toEqual(
      [1, 1, 2, 60],
    );
  });
});

describe('banner', () => {
  const base = {
    url: 'http://127.0.0.1:1234',
    clientId: 'sandboxclient',
    authToken: 'sekrit123',
    rates: SANDBOX_LIMITS,
    faults: {},
    latencyMs: 0,
    seed: 7,
  };
  it('prints the default token and env lines', () => {
    const text = sandboxBanner({ ...base, defaultToken: true });
    expect(text).toContain('export BRE_BASE_URL=http://127.0.0.1:1234');
    expect(text).toContain('export BUREAU_BASE_URL=http://127.0.0.1:1234');
    expect(text).toContain('export ACCOUNT_BASE_URL=http://127.0.0.1:1234');
    expect(text).toContain('export BRE_AUTH_TOKEN=sekrit123');
    expect(text).toContain('workflow 500/min, bureau 1000/min, account 300/min');
  });
  it('names the caller addresses with limits of their own', () => {
    const text = sandboxBanner({
      ...base,
      defaultToken: true,
      callerRates: { '127.0.0.4': { workflow: { limit: 250, windowMs: 60_000 } } },
    });
    expect(text).toContain('caller 127.0.0.4  workflow 250/min (its own window, over the limits above)');
  });
  it('never prints a token that came from the environment', () => {
    const text = sandboxBanner({ ...base, defaultToken: false });
    expect(text).not.toContain('sekrit123');
    expect(text).toContain('from BRE_AUTH_TOKEN');
  });
});
