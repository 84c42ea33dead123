import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../src/csv.js';
import { binLabels, binOf, featureBins, Reservoir } from '../src/features.js';
import { histogramEdges, histogramOf } from '../src/histogram.js';
import { niceStep } from '@bre-batch/formats/page/scale';
import { parseOutcome, RowColumns } from '../src/input-columns.js';
import { bucketOf, hashKey } from '../src/partition.js';
import { decisionCategory, isFeatureField, sideView, sortCategories, swapClass } from '../src/side.js';
import { esc } from '@bre-batch/formats/page/svg';

describe('decisionCategory', () => {
  it.each([
    ['Approve', 'Approve'],
    ['Approved', 'Approve'],
    ['APPROVED', 'Approve'],
    [' approve ', 'Approve'],
    ['Reject', 'Reject'],
    ['rejected', 'Reject'],
    ['Declined', 'Reject'],
    ['Proceed to Next Rule', 'Proceed to Next Rule'],
    ['Proceed To Bank', 'Proceed To Bank'],
    [null, '(none)'],
    [undefined, '(none)'],
    ['', '(none)'],
  ])('%s -> %s', (value, category) => {
    expect(decisionCategory(value as never)).toBe(category);
  });
});

describe('sideView', () => {
  it('reads a payday workflow result', () => {
    const v = sideView(
      {
        decision: 'Approved',
        loan_amount: 5000,
        rules_failed: ['a', 'b'],
        'bureau_intel.bureau_score': 700,
        'geocoding.state': 'KA',
        request_id: 'r1',
        offers_count: 2,
        'best_offer.loan_amount': 9000,
        workflow: 'bureau',
      },
      'payday',
    );
    expect(v).toEqual({
      ran: true,
      category: 'Approve',
      approved: true,
      amount: 5000,
      offersCount: 2,
      bestOfferAmount: 9000,
      rulesFailed: ['a', 'b'],
      features: { 'bureau_intel.bureau_score': 700, 'geocoding.state': 'KA' },
    });
  });

  it('reads the EMI product from emi_decision and the best offer', () => {
    const v = sideView(
      { decision: 'Reject', emi_decision: 'Approve', loan_amount: null, 'best_offer.loan_amount': 12000 },
      'emi',
    );
    expect(v.approved).toBe(true);
    expect(v.amount).toBe(12000);
  });

  it('tells skipped and absent stages apart', () => {
    expect(sideView({ skipped: true }, 'payday')).toMatchObject({ ran: false, category: '(skipped)', approved: false });
    expect(sideView(undefined, 'payday')).toMatchObject({ ran: false, category: '(absent)', approved: false });
  });

  it.each([
    ['decision', false],
    ['best_offer.tenure_months', false],
    ['rules_failed', false],
    ['bureau_intel.bureau_score', true],
    ['score', true],
    ['cbs_risk_grade_v1', true],
  ])('%s is a feature: %s', (name, expected) => {
    expect(isFeatureField(name, 1)).toBe(expected);
  });

  it.each([
    [true, true, 'both_approve'],
    [true, false, 'swap_out'],
    [false, true, 'swap_in'],
    [false, false, 'both_reject'],
  ])('swap class of A=%s B=%s is %s', (a, b, cls) => {
    const view = (approved: boolean) => sideView({ decision: approved ? 'Approve' : 'Reject' }, 'payday');
    expect(swapClass(view(a), view(b))).toBe(cls);
  });

  it('orders crosstab categories: Approve, Reject, others, pseudo-categories', () => {
    expect(sortCategories(['(skipped)', 'Zeta', 'Reject', 'Alpha', 'Approve', '(none)', 'Reject'])).toEqual([
      'Approve',
      'Reject',
      'Alpha',
      'Zeta',
      '(skipped)',
      '(none)',
    ]);
  });
});

describe('csvCell (Excel-safe)', () => {
  it.each([
    ['plain', 'plain'],
    [12.5, '12.5'],
    [-300, '-300'],
    ['-300', '-300'],
    ['=1+2', "'=1+2"],
    ['+44 20', "'+44 20"],
    ['-abc', "'-abc"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['a,b', '"a,b"'],
    ['line\nbreak', '"line\nbreak"'],
    [null, ''],
    [undefined, ''],
    [true, 'true'],
  ])('%j -> %s', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('joins a line', () => {
    expect(csvLine(['k', 1, null, 'x"y'])).toBe('k,1,,"x""y"\n');
  });
});

describe('histogram', () => {
  it.each([
    [0.7, 1],
    [1.5, 2],
    [2.2, 2.5],
    [3, 5],
    [7, 10],
    [43, 50],
    [0.013, 0.02],
  ])('niceStep(%s) = %s', (rough, step) => {
    expect(niceStep(rough)).toBeCloseTo(step, 12);
  });

  it('bins non-zero changes and counts zeros apart', () => {
    const h = histogramOf([0, 0, -500, 500, 120]);
    expect(h.unchanged).toBe(2);
    expect(h.bins[0]).toEqual({ lower: -500, upper: -450, count: 1 });
    expect(h.bins.reduce((s, b) => s + b.count, 0)).toBe(3);
    expect(h.bins[h.bins.length - 1]).toEqual({ lower: 500, upper: 550, count: 1 });
    expect(h.bins.find((b) => b.lower <= 120 && 120 < b.upper)?.count).toBe(1);
  });

  it('handles one repeated value and nothing at all', () => {
    expect(histogramEdges(300, 300)).toEqual([300, 350]);
    expect(histogramOf([]).bins).toEqual([]);
    expect(histogramOf([0]).unchanged).toBe(1);
  });
});

describe('feature bins', () => {
  it('numeric: deciles, then a missing bin', () => {
    const bins = featureBins([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null]);
    expect(bins).toEqual({ type: 'numeric', edges: [1, 2, 3, 4, 5, 6, 7, 8, 9] });
    expect(binLabels(bins)).toHaveLength(11);
    expect(binOf(bins, 10)).toBe(9);
    expect(binOf(bins, null)).toBe(10);
    expect(binOf(bins, 'x')).toBe(10);
  });

  it('categorical: most frequent values, other, missing', () => {
    const bins = featureBins(['KA', 'KA', 'MH', true, null]);
    expect(bins).toEqual({ type: 'categorical', categories: ['KA', 'MH', 'true'] });
    expect(binLabels(bins)).toEqual(['KA', 'MH', 'true', '(other)', '(missing)']);
    expect(binOf(bins, 'TN')).toBe(3);
    expect(binOf(bins, true)).toBe(2);
    expect(binOf(bins, undefined)).toBe(4);
  });

  it('reservoir keeps everything up to its size and a uniform, reproducible sample beyond', () => {
    const take = (n: number): number[] => {
      const r = new Reservoir<number>(100);
      for (let i = 0; i < n; i += 1) r.put(r.offer(), i);
      return r.items;
    };
    expect(take(50)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const s = take(10_000);
    expect(s).toHaveLength(100);
    expect(take(10_000)).toEqual(s);
    const mean = s.reduce((x, y) => x + y, 0) / s.length;
    expect(mean).toBeGreaterThan(3500);
    expect(mean).toBeLessThan(6500);
  });
});

describe('input columns', () => {
  it.each([
    ['1', 1],
    [1, 1],
    ['0', 0],
    [0, 0],
    [true, 1],
    ['false', 0],
    [' 1 ', 1],
    ['1.0', 1],
    ['', null],
    ['2', null],
    ['bad', null],
    [null, null],
    [undefined, null],
  ])('outcome %j -> %s', (value, outcome) => {
    expect(parseOutcome(value)).toBe(outcome);
  });

  it('keeps segment and outcome per row, grouping values beyond the cap', () => {
    const c = new RowColumns('state', 'bad');
    c.set(1, { state: 'KA', bad: '1' });
    c.set(3, { state: '', bad: 'x' });
    for (let i = 0; i < 150; i += 1) c.set(10 + i, { state: `S${i}`, bad: '0' });
    expect([c.segment(1), c.outcomeOf(1)]).toEqual(['KA', 1]);
    expect([c.segment(3), c.outcomeOf(3)]).toEqual(['(missing)', null]);
    expect([c.segment(2), c.outcomeOf(2)]).toEqual(['(missing)', null]);
    expect(c.segment(10 + 98)).toBe('S98');
    expect(c.segment(10 + 149)).toBe('(other)');
    expect(c.segment(99_999)).toBe('(missing)');
  });
});

describe('hash buckets and escaping', () => {
  it('FNV-1a is stable and spreads keys', () => {
    expect(hashKey('')).toBe(0x811c9dc5);
    expect(hashKey('a')).toBe(0xe40c292c);
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 8000; i += 1) counts[bucketOf(`ref-${i}`, 8)] += 1;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(bucketOf(null, 8)).toBe(0);
  });

  it('escapes markup', () => {
    expect(esc(`<img src=x onerror="a">&'`)).toBe('&lt;img src=x onerror=&quot;a&quot;&gt;&amp;&#39;');
  });
});
