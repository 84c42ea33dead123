/** Amounts, the billing rule and the meter (src/limits/spend.ts): pure, table-driven. */
import { describe, expect, it } from 'vitest';
import { emptyCounts, formatAmount, outcomeOf, parseAmount, SpendMeter, type Prices } from '../../src/limits/spend.js';

describe('amounts', () => {
  it.each([
    ['0', 0],
    ['12', 12_000_000],
    ['0.05', 50_000],
    ['0.000001', 1],
    [' 1.5 ', 1_500_000],
  ])('%s is %i micro-units', (text, micros) => {
    expect(parseAmount(text, '--price')).toBe(micros);
  });

  it.each([
    [0, 'EUR', '0.00 EUR'],
    [12_500, 'EUR', '0.0125 EUR'],
    [12_300_000, 'USD', '12.30 USD'],
    [1_000_000, '', '1.00'],
    [-500_000, 'EUR', '-0.50 EUR'],
  ])('%i micro-units read %s', (micros, cur, text) => {
    expect(formatAmount(micros, cur)).toBe(text);
  });
});

describe('the billing rule', () => {
  it.each([
    [200, '2xx'],
    [204, '2xx'],
    [401, '4xx'],
    [422, '4xx'],
    [429, '429'],
    [500, '5xx'],
    [503, '5xx'],
    ['timeout', 'timeout'],
    ['interrupted', 'timeout'],
    ['network', 'network'],
    ['tls_failed', 'network'],
  ])('%s is %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });
});

describe('the meter', () => {
  const prices: Prices = {
    currency: 'EUR',
    service: { workflow: 50_000 },
    workflow: {},
    billed: new Set(['2xx', '5xx', 'timeout']),
  };

  it('counts an attempt pending while it is out, then billed by the rule', () => {
    const m = new SpendMeter(prices, emptyCounts(), undefined, 50_000);
    m.start('workflow', 50_000);
    m.start('workflow', 50_000);
    m.start('workflow', 50_000);
    expect(m.committedMicros).toBe(150_000);
    m.end('workflow', 50_000, 200);
    m.end('workflow', 50_000, 429);
    m.end('workflow', 50_000, 'timeout');
    expect(m.session.billed.workflow).toBe(2);
    expect(m.session.attempts.workflow).toBe(3);
    expect(m.sessionMicros).toBe(100_000);
    expect(m.pending.workflow).toBe(0);
  });

  it('admits a row only when it fits under the cap with the rows in flight, earlier sessions counted', () => {
    const before = emptyCounts();
    before.micros.workflow = 800_000;
    const m = new SpendMeter(prices, before, 1_000_000, 50_000);
    expect(m.admits()).toBe(true);
    m.rowsInFlight = 3;
    expect(m.admits()).toBe(true); // 0.80 + 4 x 0.05 = 1.00
    m.rowsInFlight = 4;
    expect(m.admits()).toBe(false);
    m.capMicros = 2_000_000;
    expect(m.admits()).toBe(true);
  });
});
