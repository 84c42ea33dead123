import { describe, expect, it } from 'vitest';
import { RowColumns } from '../src/input-columns.js';
import { resolveCompareOptions } from '../src/options.js';
import { comparePeriods, MISSING_PERIOD, periodOf, type PeriodUnit } from '@bre-batch/formats/input/period';
import { erfc } from '../src/score/normal.js';
import { OverTime, topMovers } from '../src/stability/over-time.js';
import { parseScoreSpecs } from '../src/score/spec.js';

describe('periodOf', () => {
  it.each<[unknown, PeriodUnit, string | null]>([
    ['2025-03-07', 'month', '2025-03'],
    ['2025-03-07', 'quarter', '2025-Q1'],
    ['2025-03-07', 'week', '2025-W10'],
    ['2025/3/7', 'month', '2025-03'],
    [' 2025-12-31 ', 'quarter', '2025-Q4'],
    ['2025-03-31T23:30:00-05:00', 'month', '2025-03'],
    ['2025-03-07 10:15', 'month', '2025-03'],
    // ISO weeks across the new year: 30 Dec 2024 is in week 1 of 2025; 3 Jan 2021 in week 53 of 2020.
    ['2024-12-30', 'week', '2025-W01'],
    ['2021-01-03', 'week', '2020-W53'],
    ['2024-02-29', 'month', '2024-02'],
    ['2025-02-29', 'month', null],
    ['2025-13-01', 'month', null],
    ['07/03/2025', 'month', null],
    ['2025-03', 'month', null],
    ['', 'month', null],
    [20250307, 'month', null],
    [null, 'month', null],
  ])('%j by %s -> %s', (value, unit, label) => {
    expect(periodOf(value, unit)).toBe(label);
  });

  it('orders chronologically, (missing) last', () => {
    expect(['2025-10', MISSING_PERIOD, '2024-12', '2025-02'].sort(comparePeriods)).toEqual([
      '2024-12',
      '2025-02',
      '2025-10',
      MISSING_PERIOD,
    ]);
    expect(['2025-W10', '2025-W09', '2024-W52'].sort(comparePeriods)).toEqual(['2024-W52', '2025-W09', '2025-W10']);
  });

  it('RowColumns keeps a period per row (missing when not a date) and refuses a column with too many periods', () => {
    const cols = new RowColumns(undefined, undefined, { column: 'd', unit: 'month' });
    cols.set(1, { d: '2025-01-09' });
    cols.set(2, { d: 'soon' });
    expect([cols.periodOf(1), cols.periodOf(2), cols.periodOf(3), cols.periodOf(null)]).toEqual([
      '2025-01',
      MISSING_PERIOD,
      MISSING_PERIOD,
      MISSING_PERIOD,
    ]);
    const daily = new RowColumns(undefined, undefined, { column: 'd', unit: 'week' });
    expect(() => {
      for (let i = 0; i < 600; i += 1)
        daily.set(i + 1, { d: new Date(Date.UTC(2000, 0, 1 + 7 * i)).toISOString().slice(0, 10) });
    }).toThrow(/Expected at most 520 distinct periods in --period column 'd' by week/);
  });
});

describe('--score and --period options', () => {
  it.each<[string[], string[], unknown]>([
    [
      ['bureau_intel.bureau_score'],
      [],
      [
        {
          label: 'bureau_intel.bureau_score',
          fieldA: 'bureau_intel.bureau_score',
          fieldB: 'bureau_intel.bureau_score',
          direction: 'higher_is_better',
          markers: [-1],
        },
      ],
    ],
    [
      ['x.old:x.new'],
      ['x.old:x.new=lower'],
      [{ label: 'x.old:x.new', fieldA: 'x.old', fieldB: 'x.new', direction: 'lower_is_better', markers: [-1] }],
    ],
    [
      [' g ', 's'],
      ['g=lower', 's=higher'],
      [
        { label: 'g', fieldA: 'g', fieldB: 'g', direction: 'lower_is_better', markers: [-1] },
        { label: 's', fieldA: 's', fieldB: 's', direction: 'higher_is_better', markers: [-1] },
      ],
    ],
  ])('%j with %j', (scores, dirs, expected) => {
    expect(parseScoreSpecs(scores, dirs)).toEqual(expected);
  });

  it.each<[string[], string[], RegExp]>([
    [[''], [], /Expected --score FIELD or FIELD_A:FIELD_B/],
    [['a:b:c'], [], /Expected --score FIELD or FIELD_A:FIELD_B .*got 'a:b:c'/],
    [['a:'], [], /got 'a:'/],
    [['s', 's'], [], /Expected each --score once, got 's' twice/],
    [['s'], ['s=up'], /Expected --score-direction NAME=higher or NAME=lower .*got 's=up'/],
    [['s'], ['t=lower'], /Expected --score-direction to name a --score \(s\), got 't'/],
  ])('%j %j is refused', (scores, dirs, message) => {
    expect(() => parseScoreSpecs(scores, dirs)).toThrow(message);
  });

  it.each<[Record<string, unknown>, RegExp]>([
    [{ score: 's' }, /Expected --outcome COLUMN with --score .*got --score s alone/],
    [{ periodUnit: 'week' }, /Expected --period COLUMN with --period-unit, got no --period/],
    [{ minPeriodKeys: 5 }, /Expected --period COLUMN with --min-period-keys/],
    [{ period: 'd', periodUnit: 'day' }, /Expected --period-unit month, week, quarter, got 'day'/],
    [{ period: 'd', minPeriodKeys: 0 }, /Expected --min-period-keys to be a whole number of at least 1, got 0/],
  ])('%j is a usage error', (extra, message) => {
    expect(() => resolveCompareOptions({ outA: 'a', outB: 'b', ...extra })).toThrow(message);
  });

  it('defaults: month, 30 keys', () => {
    expect(resolveCompareOptions({ outA: 'a', outB: 'b', period: 'app_date' }).period).toEqual({
      column: 'app_date',
      unit: 'month',
      minKeys: 30,
    });
  });
});

describe('stability over time', () => {
  // Bins 0/1. Dated values: 10, so the baseline pools the oldest periods until it holds ⌈10/4⌉ = 3 (at least
  // minKeys 2): 2024-12 (1 value) and 2025-01 (4) → counts 3 and 2. 2025-02 has 1 and 3:
  //   PSI = (¼ − ⅗)·ln(¼ / ⅗) + (¾ − ⅖)·ln(¾ / ⅖); noise = (2 − 1)·(1/5 + 1/4) = 0.45.
  const t = new OverTime(2);
  const add = (p: string, bins: number[]) => {
    for (const b of bins) t.add(p, b);
  };
  add('2024-12', [0]);
  add('2025-01', [0, 0, 1, 1]);
  add('2025-02', [0, 1, 1, 1]);
  add('2025-03', [1]);
  add(MISSING_PERIOD, [0, 1]);

  it('PSI of each later period against the pooled oldest periods', () => {
    const f = t.figures('x', 'input', 'numeric', 2);
    expect([f.baseline, f.baseline_periods, f.baseline_n]).toEqual(['2024-12 to 2025-01', ['2024-12', '2025-01'], 5]);
    expect(f.periods.map((p) => [p.period, p.n, p.small, p.baseline, p.psi === null])).toEqual([
      ['2024-12', 1, true, true, true],
      ['2025-01', 4, false, true, true],
      ['2025-02', 4, false, false, false],
      ['2025-03', 1, true, false, false],
      [MISSING_PERIOD, 2, false, false, true],
    ]);
    const expected = (0.25 - 0.6) * Math.log(0.25 / 0.6) + (0.75 - 0.4) * Math.log(0.75 / 0.4);
    expect(f.periods[2].psi).toBeCloseTo(expected, 12);
    expect(f.periods[2].noise).toBeCloseTo(0.45, 12);
    // χ² with 1 degree of freedom at PSI / (1/5 + 1/4): P(χ²₁ ≥ x) = erfc(√(x/2)).
    const x = expected / 0.45;
    expect(f.periods[2].p_value).toBeCloseTo(erfc(Math.sqrt(x / 2)), 6);
    expect(f.periods[1].noise).toBeNull();
    // The latest period that is not small is 2025-02 (2025-03 has one value; (missing) is not a time).
    expect(f.latest?.period).toBe('2025-02');
    expect(f.max?.period).toBe('2025-02');
  });

  it('always leaves the last period out of the baseline', () => {
    const two = new OverTime(2);
    two.add('2025-01', 0);
    two.add('2025-02', 1);
    const f = two.figures('y', 'a', 'numeric', 30);
    expect(f.baseline).toBe('2025-01');
    expect(f.latest).toBeNull();
    expect(f.periods[1].psi).not.toBeNull();
  });

  it('top movers by latest PSI', () => {
    const still = new OverTime(2);
    for (const p of ['2025-01', '2025-02']) {
      still.add(p, 0);
      still.add(p, 1);
    }
    const moved = t.figures('moved', 'input', 'numeric', 2);
    const flat = still.figures('flat', 'a', 'numeric', 1);
    // A PSI of 0 is no move: only 'moved' is listed.
    expect(topMovers([flat, moved]).map((s) => s.name)).toEqual(['moved']);
    expect(flat.latest).toMatchObject({ psi: 0, noise: 1, p_value: 1 });
  });
});
