/** `run`'s spend options (src/cli/run-options/spend.ts): --price, --currency, --billed, --max-spend. */
import { describe, expect, it } from 'vitest';
import type { Pipeline } from '../../../src/config/pipeline.js';
import { fakeContext, refusal, resolveArgs } from './parse.js';

describe('--price', () => {
  it('prices nothing by default: no spend is counted', () => {
    expect(resolveArgs([]).settings.prices).toBeUndefined();
  });

  it('takes SERVICE=AMOUNT and workflow:NAME=AMOUNT, in micro-units, with the default billing rule', () => {
    const s = resolveArgs([
      '--price',
      'bureau=0.20',
      '--price',
      'workflow:bureau_mobile_bank_bre=0.0125',
      '--currency',
      'eur',
    ]).settings;
    expect(s.prices).toEqual({
      currency: 'EUR',
      service: { bureau: 200_000 },
      workflow: { bureau_mobile_bank_bre: 12_500 },
      billed: new Set(['2xx', '5xx', 'timeout']),
    });
  });

  it.each([
    [
      'bureau',
      "Expected --price to be SERVICE=AMOUNT (SERVICE workflow, bureau, account) or workflow:NAME=AMOUNT, got 'bureau'",
    ],
    [
      'scoring=1',
      "Expected --price to be SERVICE=AMOUNT (SERVICE workflow, bureau, account) or workflow:NAME=AMOUNT, got 'scoring=1'",
    ],
    [
      'bureau=-1',
      "Expected --price to be an amount of money (e.g. 0.05 or 12; at most 6 decimals, no currency sign), got '-1'",
    ],
    [
      'bureau=€2',
      "Expected --price to be an amount of money (e.g. 0.05 or 12; at most 6 decimals, no currency sign), got '€2'",
    ],
    [
      'bureau=0.0000001',
      "Expected --price to be an amount of money (e.g. 0.05 or 12; at most 6 decimals, no currency sign), got '0.0000001'",
    ],
  ])('refuses %s', (given, message) => {
    expect(refusal(['--price', given])).toEqual({ code: 'USAGE', message });
  });

  it("overrides the pipeline file's prices one by one, and takes its currency and rule", () => {
    const ctx = fakeContext({
      loadPipeline: (ref) =>
        ({
          name: ref,
          path: `/pipelines/${ref}.yaml`,
          stages: [],
          key: 'reference_id',
          prices: {
            currency: 'INR',
            service: { bureau: 2_000_000, workflow: 1_000_000 },
            workflow: {},
            billed: ['2xx'],
          },
        }) as unknown as Pipeline,
    });
    const s = resolveArgs(['--price', 'bureau=3'], ctx).settings;
    expect(s.prices).toEqual({
      currency: 'INR',
      service: { bureau: 3_000_000, workflow: 1_000_000 },
      workflow: {},
      billed: new Set(['2xx']),
    });
  });
});

describe('--billed', () => {
  it('replaces the rule', () => {
    expect(resolveArgs(['--price', 'workflow=1', '--billed', '2xx,429']).settings.prices?.billed).toEqual(
      new Set(['2xx', '429']),
    );
  });

  it('refuses an outcome it does not know', () => {
    expect(refusal(['--price', 'workflow=1', '--billed', '2xx,3xx'])).toEqual({
      code: 'USAGE',
      message:
        "Expected --billed to list outcomes among 2xx, 4xx, 429, 5xx, timeout, network (comma-separated), got '3xx'",
    });
  });
});

describe('--max-spend', () => {
  it('is the cap in micro-units', () => {
    expect(resolveArgs(['--price', 'workflow=0.05', '--max-spend', '40']).settings.maxSpendMicros).toBe(40_000_000);
  });

  it('needs a price: without one nothing would be counted', () => {
    expect(refusal(['--max-spend', '40']).message).toMatch(/^Expected a price with --max-spend/);
  });

  it('refuses what is no amount', () => {
    expect(refusal(['--price', 'workflow=1', '--max-spend', 'lots']).message).toBe(
      "Expected --max-spend to be an amount of money (e.g. 0.05 or 12; at most 6 decimals, no currency sign), got 'lots'",
    );
  });

  it('refuses a currency that is no code', () => {
    expect(refusal(['--price', 'workflow=1', '--currency', 'E$']).message).toMatch(
      /^Expected --currency to be a currency code/,
    );
  });
});
