/**
 * The sample options (src/sample/design.ts), table-driven: what is accepted, what it resolves to, and the
 * "Expected X, got Y" of everything refused; and a row's stratum (src/sample/strata.ts): values, dates
 * grouped by month, week and quarter, the missing-value stratum, names and order.
 */
import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import {
  describeSampleOptions,
  parseStratifyBy,
  resolveSampleOptions,
  type SampleOptions,
} from '../../src/sample/design.js';
import { compareStrata, stratumName, stratumValues } from '../../src/sample/strata.js';

describe('resolveSampleOptions', () => {
  it.each<[string, SampleOptions, unknown]>([
    ['no sample option', {}, undefined],
    [
      '--sample 300',
      { sample: '300' },
      { seed: 'bre-batch', stratifyBy: [], allocation: 'proportional', size: 300, share: null },
    ],
    [
      '--sample-share 0.2 --stratify-by',
      { sampleShare: '0.2', stratifyBy: 'application_date:month,hist_decision' },
      {
        seed: 'bre-batch',
        stratifyBy: [
          { column: 'application_date', group: 'month' },
          { column: 'hist_decision', group: null },
        ],
        allocation: 'proportional',
        size: null,
        share: 0.2,
      },
    ],
    [
      '--sample-share 1 (every row)',
      { sampleShare: 1 },
      { seed: 'bre-batch', stratifyBy: [], allocation: 'proportional', size: null, share: 1 },
    ],
    [
      '--sample 40 equal, a seed',
      { sample: 40, allocation: 'EQUAL', seed: '2026-11', stratifyBy: ['a', 'b:Quarter'] },
      {
        seed: '2026-11',
        stratifyBy: [
          { column: 'a', group: null },
          { column: 'b', group: 'quarter' },
        ],
        allocation: 'equal',
        size: 40,
        share: null,
      },
    ],
    [
      'a numeric seed stays text',
      { sample: '5', seed: 42 },
      { seed: '42', stratifyBy: [], allocation: 'proportional', size: 5, share: null },
    ],
  ])('%s', (_what, o, expected) => {
    expect(resolveSampleOptions(o)).toEqual(expected);
  });

  it.each<[string, SampleOptions, RegExp]>([
    ['both sizes', { sample: '10', sampleShare: '0.1' }, /Expected one of --sample N and --sample-share P, got both/],
    [
      '--stratify-by alone',
      { stratifyBy: 'x' },
      /Expected --sample N or --sample-share P with --stratify-by, got neither/,
    ],
    [
      '--seed and --sample-allocation alone',
      { seed: 's', allocation: 'equal' },
      /with --seed and --sample-allocation, got neither/,
    ],
    ['--sample 0', { sample: '0' }, /Expected --sample to be a whole number of rows >= 1, got '0'/],
    ['--sample 2.5', { sample: '2.5' }, /got '2.5'/],
    ['--sample ten', { sample: 'ten' }, /got 'ten'/],
    ['--sample -3', { sample: '-3' }, /got '-3'/],
    ['--sample-share 0', { sampleShare: '0' }, /Expected --sample-share to be a share above 0 and at most 1 .*got '0'/],
    ['--sample-share 20%', { sampleShare: '20%' }, /got '20%'/],
    ['--sample-share 1.5', { sampleShare: '1.5' }, /got '1.5'/],
    [
      '--sample-allocation random',
      { sample: '5', allocation: 'random' },
      /Expected --sample-allocation to be proportional or equal, got 'random'/,
    ],
    [
      'equal with a share',
      { sampleShare: '0.5', allocation: 'equal' },
      /Expected --sample-allocation equal only with --sample N, got it with --sample-share 0.5/,
    ],
    ['an empty seed', { sample: '5', seed: '' }, /Expected --seed to be some text .*got ''/],
    [
      'a grouping that is not one',
      { sample: '5', stratifyBy: 'application_date:day' },
      /Expected a date grouping of month, week, quarter after 'application_date:' in --stratify-by, got 'day'/,
    ],
    ['an empty column', { sample: '5', stratifyBy: 'a,,b' }, /Expected --stratify-by to name input columns/],
    [
      'a column twice',
      { sample: '5', stratifyBy: 'a,a:month' },
      /Expected each column once in --stratify-by, got 'a' twice/,
    ],
  ])('refuses %s', (_what, o, message) => {
    let err: unknown;
    try {
      resolveSampleOptions(o);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('USAGE');
    expect((err as BreError).message).toMatch(message);
  });

  it('describes a design as the options that give it', () => {
    expect(
      describeSampleOptions(
        resolveSampleOptions({ sampleShare: '0.2', stratifyBy: 'application_date:month,channel' })!,
      ),
    ).toBe('--sample-share 0.2 --stratify-by application_date:month,channel --seed bre-batch');
    expect(
      describeSampleOptions(resolveSampleOptions({ sample: '100', allocation: 'equal', seed: 'two words' })!),
    ).toBe("--sample 100 --seed 'two words' --sample-allocation equal");
  });

  it('reads --stratify-by repeated or comma-separated alike', () => {
    expect(parseStratifyBy(['a:month', 'b, c:week'])).toEqual(parseStratifyBy('a:month,b,c:week'));
  });
});

describe("a row's stratum", () => {
  const cols = parseStratifyBy('application_date:month,hist_decision');
  it.each<[string, Record<string, unknown>, (string | null)[], string]>([
    [
      'a date and a value',
      { application_date: '2024-07-22', hist_decision: 'Approve' },
      ['2024-07', 'Approve'],
      '2024-07|Approve',
    ],
    [
      'a date with a time',
      { application_date: '2025-03-31T23:59:00+05:30', hist_decision: 'Reject' },
      ['2025-03', 'Reject'],
      '2025-03|Reject',
    ],
    ['an empty date', { application_date: '', hist_decision: 'Reject' }, [null, 'Reject'], '(missing)|Reject'],
    [
      'a date that is not one',
      { application_date: '31/12/2024', hist_decision: 'Reject' },
      [null, 'Reject'],
      '(missing)|Reject',
    ],
    ['no such field in the row', { hist_decision: 'Approve' }, [null, 'Approve'], '(missing)|Approve'],
    ['JSON null and blanks', { application_date: null, hist_decision: '   ' }, [null, null], '(missing)|(missing)'],
    [
      'values trimmed; numbers and booleans as text',
      { application_date: '2024-12-01', hist_decision: ' Approve ' },
      ['2024-12', 'Approve'],
      '2024-12|Approve',
    ],
  ])('%s', (_what, data, values, name) => {
    expect(stratumValues(data, cols)).toEqual(values);
    expect(stratumName(values)).toBe(name);
  });

  it.each([
    ['week', '2025-01-01', '2025-W01'],
    ['week', '2024-12-30', '2025-W01'],
    ['week', '2024-12-29', '2024-W52'],
    ['quarter', '2025-03-31', '2025-Q1'],
    ['quarter', '2025-04-01', '2025-Q2'],
    ['month', '2025/2/28', '2025-02'],
  ] as const)('groups a date by %s: %s -> %s', (unit, date, label) => {
    expect(stratumValues({ d: date }, [{ column: 'd', group: unit }])).toEqual([label]);
  });

  it('reads numbers, booleans and a nested NDJSON field', () => {
    const c = parseStratifyBy('score_band,thin_file,external.segment');
    expect(stratumValues({ score_band: 3, thin_file: false, external: { segment: 'A' } }, c)).toEqual([
      '3',
      'false',
      'A',
    ]);
  });

  it('one stratum, the whole input, without --stratify-by', () => {
    expect(stratumValues({ anything: 1 }, [])).toEqual([]);
    expect(stratumName([])).toBe('(all)');
  });

  it('orders strata column by column, missing last, whatever the order rows came in', () => {
    const list: (string | null)[][] = [
      [null, 'B'],
      ['2025-01', null],
      ['2024-12', 'B'],
      ['2025-01', 'A'],
      ['2024-12', 'A'],
      [null, 'A'],
    ];
    expect(list.sort(compareStrata).map(stratumName)).toEqual([
      '2024-12|A',
      '2024-12|B',
      '2025-01|A',
      '2025-01|(missing)',
      '(missing)|A',
      '(missing)|B',
    ]);
  });
});
