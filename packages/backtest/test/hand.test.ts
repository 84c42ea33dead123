/**
 * The hand-computed case: every figure of compare.json asserted against values worked out by hand from the
 * fixture (./fixtures.ts, handCase). Row by row (A → B, swap class, state, bad):
 *   1 Approve 1000 → Approve 1000   both_approve  KA 0
 *   2 Approve 1000 → Approve 1500   both_approve  KA 0
 *   3 Approve 2000 → Approve 1500   both_approve  MH 1
 *   4 Approve 2000 → Reject         swap_out      MH 1
 *   5 Approved 3000 → Reject        swap_out      KA ?
 *   6 Reject → Approve 1000         swap_in       MH 0
 *   7 Reject → Reject               both_reject   KA 1
 *   8 Reject → Proceed to Next Rule both_reject   MH 0
 *   9 Proceed to Next Rule → approve 2500 swap_in KA ?
 *  10 (skipped) → Reject            both_reject   MH 0
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCompare, type CompareJson } from '../src/compare.js';
import type { ComparisonFigures } from '../src/comparison.js';
import { wilson } from '../src/stats.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { FORMULA_KEY, handCase, NASTY_KEY } from './fixtures.js';

let report: CompareJson;
let c: ComparisonFigures;
let outDir: string;

beforeAll(async () => {
  const root = tempDir();
  const { a, b } = handCase(root);
  outDir = join(root, 'cmp');
  const r = await runCompare({
    outA: a,
    outB: b,
    out: outDir,
    outcome: 'bad',
    by: 'state',
    now: () => new Date('2025-02-03T04:05:06Z'),
  });
  report = r.report;
  c = report.comparisons[0];
  // What was written is what was returned.
  expect(JSON.parse(readFileSync(r.files.json, 'utf8'))).toEqual(JSON.parse(JSON.stringify(report)));
});

const close = (x: number | null | undefined, y: number): void => expect(x).toBeCloseTo(y, 10);
/** Outcome coverage: unknown keys, known share, and the bad rate if every unknown were good / bad (worked by hand). */
const cov = (unknown: number, coverage: number, best: number, worst: number) => ({
  unknown,
  coverage,
  bad_rate_best: best,
  bad_rate_worst: worst,
});

describe('hand-computed compare.json', () => {
  it('runs and join', () => {
    expect(report.version).toBe(1);
    expect(report.generated_at).toBe('2025-02-03T04:05:06.000Z');
    expect(report.a).toMatchObject({
      pipeline: 'bureau_mobile',
      results_rows: 13,
      malformed_lines: 0,
      errors: { rows: 1, by_code: { SERVER_ERROR: 1 } },
    });
    expect(report.b).toMatchObject({
      pipeline: 'bureau_mobile_v2',
      results_rows: 13,
      malformed_lines: 1,
      errors: { rows: 0, by_code: {} },
    });
    expect(report.a.stages).toEqual({ bre: { rows: 13, ran: 12, decisions: true } });
    expect(report.b.stages).toEqual({ bre: { rows: 13, ran: 13, decisions: true } });
    expect(report.join).toEqual({
      matched: 10,
      only_a: 1,
      only_b: 1,
      only_a_keys: [FORMULA_KEY],
      only_b_keys: [NASTY_KEY],
      duplicates: { keys: 1, a_keys: 0, b_keys: 1, a_rows: 1, b_rows: 2, sample: ['k13'] },
      no_key: { a_rows: 1, b_rows: 0 },
      list_cap: 100,
    });
    // Every valid line of each run is accounted for exactly once.
    const j = report.join;
    expect(j.matched + j.only_a + j.duplicates.a_rows + j.no_key.a_rows).toBe(report.a.results_rows);
    expect(j.matched + j.only_b + j.duplicates.b_rows + j.no_key.b_rows).toBe(report.b.results_rows);
    expect(report.options).toMatchObject({
      product: 'payday',
      decision_field: 'decision',
      amount_field: 'loan_amount',
      outcome: 'bad',
      by: 'state',
      buckets: 1,
    });
    expect(report.comparisons).toHaveLength(1);
    expect([c.label, c.stage_a, c.stage_b, c.n, c.ran_a, c.ran_b]).toEqual(['bre', 'bre', 'bre', 10, 9, 10]);
  });

  it('decisions and crosstab', () => {
    expect(c.decisions).toEqual({
      categories: ['Approve', 'Reject', 'Proceed to Next Rule', '(skipped)'],
      a: { Approve: 5, Reject: 3, 'Proceed to Next Rule': 1, '(skipped)': 1 },
      b: { Approve: 5, Reject: 4, 'Proceed to Next Rule': 1, '(skipped)': 0 },
      crosstab: [
        [3, 2, 0, 0],
        [1, 1, 1, 0],
        [1, 0, 0, 0],
        [0, 1, 0, 0],
      ],
    });
  });

  it('approval rates, difference and swaps', () => {
    const a = c.approval!;
    expect(a.n).toBe(10);
    expect(a.a).toEqual({ count: 5, n: 10, rate: 0.5, ci: wilson(5, 10) });
    expect(a.b).toEqual({ count: 5, n: 10, rate: 0.5, ci: wilson(5, 10) });
    close(a.a.ci!.lower, 0.236593090512564);
    expect(a.difference).toBe(0);
    // Newcombe paired, table (3, 2, 2, 3): ad − bc = 5 = n/2, so φ = 0 and the interval is symmetric.
    close(a.difference_ci!.lower, -0.3725136238199143);
    close(a.difference_ci!.upper, 0.3725136238199143);
    expect(c.swaps).toEqual({ swap_in: 2, swap_out: 2, both_approve: 3, both_reject: 3, net: 0 });
  });

  it('loan amounts and the histogram of changes', () => {
    const m = c.amounts!;
    expect({ ...m, histogram: undefined }).toEqual({
      a_total: 9000,
      b_total: 7500,
      total_change: -1500,
      a_approved_with_amount: 5,
      b_approved_with_amount: 5,
      a_mean: 1800,
      b_mean: 1500,
      both_approve: {
        n: 3,
        increased: 1,
        decreased: 1,
        unchanged: 1,
        total_change: 0,
        mean_change: 0,
        min_change: -500,
        max_change: 500,
      },
      swap_in_total: 3500,
      swap_out_total: 5000,
      histogram: undefined,
    });
    const h = m.histogram!;
    expect(h.unchanged).toBe(1);
    expect(h.bins).toHaveLength(21);
    expect(h.bins[0]).toEqual({ lower: -500, upper: -450, count: 1 });
    expect(h.bins[20]).toEqual({ lower: 500, upper: 550, count: 1 });
    expect(h.bins.slice(1, 20).every((b) => b.count === 0)).toBe(true);
  });

  it('offers', () => {
    expect(c.offers).toEqual({
      n: 9,
      a_offers: 4,
      b_offers: 4,
      more: 1,
      fewer: 1,
      same: 7,
      best_offer: { a_total: 2000, b_total: 2100, paired_n: 2, mean_change: 50 },
    });
  });

  it('rules failed, largest change first', () => {
    expect(c.rules.map((r) => r.rule)).toEqual(['income_check', 'bureau_score_min', 'dpd_check']);
    const [inc, bsm, dpd] = c.rules;
    expect(inc).toMatchObject({
      a_failed: 0,
      b_failed: 2,
      a_rate: 0,
      b_rate: 0.2,
      newly_failing: 1,
      no_longer_failing: 0,
    });
    close(inc.difference, 0.2);
    expect(bsm).toMatchObject({ a_failed: 3, b_failed: 2, b_rate: 0.2, newly_failing: 1, no_longer_failing: 2 });
    close(bsm.a_rate, 3 / 9);
    close(bsm.difference, 0.2 - 3 / 9);
    expect(dpd).toMatchObject({ a_failed: 2, b_failed: 1, b_rate: 0.1, newly_failing: 0, no_longer_failing: 1 });
    close(dpd.a_rate, 2 / 9);
    close(dpd.difference, 0.1 - 2 / 9);
  });

  it('feature shifts: PSI on A deciles with the epsilon floor', () => {
    expect(c.features.map((f) => f.feature)).toEqual(['bureau_intel.bureau_score', 'mobile_intel.fraud_flag']);
    expect(c.features_only_in_b).toEqual(['mobile_intel.new_score']);
    const score = c.features[0];
    const e = 1e-4;
    const expectedPsi =
      (e - 1 / 9) * Math.log(e / (1 / 9)) +
      7 * (0.1 - 1 / 9) * Math.log(0.1 / (1 / 9)) +
      (0.2 - 1 / 9) * Math.log(0.2 / (1 / 9)) +
      (0.1 - e) * Math.log(0.1 / e);
    close(score.psi, expectedPsi);
    expect(score.band).toBe('major');
    expect(score.type).toBe('numeric');
    expect(score.bins.map((b) => b.a)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    expect(score.bins.map((b) => b.b)).toEqual([0, 1, 1, 1, 1, 2, 1, 1, 1, 1, 0]);
    expect(score.bins[0].label).toBe('≤ 510');
    expect(score.bins[9].label).toBe('> 590');
    expect(score.bins[10].label).toBe('(missing)');
    expect([score.n_a, score.n_b, score.mean_a, score.mean_b, score.paired_n, score.changed]).toEqual([
      9, 10, 550, 567.5, 9, 5,
    ]);
    close(score.mean_change, 25 / 9);

    const flag = c.features[1];
    expect(flag.type).toBe('categorical');
    expect(flag.bins).toEqual([
      { label: 'false', a: 8, b: 8 },
      { label: 'true', a: 1, b: 2 },
      { label: '(other)', a: 0, b: 0 },
      { label: '(missing)', a: 0, b: 0 },
    ]);
    close(flag.psi, (0.8 - 8 / 9) * Math.log(0.8 / (8 / 9)) + (0.2 - 1 / 9) * Math.log(0.2 / (1 / 9)));
    expect(flag.band).toBe('stable');
    expect([flag.mean_a, flag.mean_b, flag.mean_change, flag.changed]).toEqual([null, null, null, 1]);
  });

  it('bad rates of the approved and swap sets (outcome 1 = bad)', () => {
    const w = (bad: number, known: number) => wilson(bad, known);
    expect(c.bad_rates).toEqual({
      a_approved: { rows: 5, known: 4, bad: 2, bad_rate: 0.5, ci: w(2, 4), ...cov(1, 0.8, 2 / 5, 3 / 5) },
      b_approved: { rows: 5, known: 4, bad: 1, bad_rate: 0.25, ci: w(1, 4), ...cov(1, 0.8, 1 / 5, 2 / 5) },
      swap_in: { rows: 2, known: 1, bad: 0, bad_rate: 0, ci: w(0, 1), ...cov(1, 0.5, 0, 0.5) },
      swap_out: { rows: 2, known: 1, bad: 1, bad_rate: 1, ci: w(1, 1), ...cov(1, 0.5, 0.5, 1) },
      both_approve: { rows: 3, known: 3, bad: 1, bad_rate: 1 / 3, ci: w(1, 3), ...cov(0, 1, 1 / 3, 1 / 3) },
      both_reject: { rows: 3, known: 3, bad: 1, bad_rate: 1 / 3, ci: w(1, 3), ...cov(0, 1, 1 / 3, 1 / 3) },
      all: { rows: 10, known: 8, bad: 3, bad_rate: 0.375, ci: w(3, 8), ...cov(2, 0.8, 3 / 10, 5 / 10) },
    });
  });

  it('segments by state', () => {
    const s = c.segments!;
    expect(s.map((x) => x.segment)).toEqual(['KA', 'MH']);
    const [ka, mh] = s;
    expect([ka.approval.n, ka.approval.a.count, ka.approval.b.count, ka.swap_in, ka.swap_out]).toEqual([5, 3, 3, 1, 1]);
    expect([mh.approval.n, mh.approval.a.count, mh.approval.b.count, mh.swap_in, mh.swap_out]).toEqual([5, 2, 2, 1, 1]);
    expect(ka.approval.difference).toBe(0);
    // (2, 1, 1, 1) and (1, 1, 1, 2): ad − bc = 1 ≤ n/2, φ = 0.
    close(ka.approval.difference_ci!.upper, 0.46486835080922256);
    close(mh.approval.difference_ci!.lower, -0.4648683508092226);
    expect(ka.bad_rate_a_approved).toEqual({
      rows: 3,
      known: 2,
      bad: 0,
      bad_rate: 0,
      ci: wilson(0, 2),
      ...cov(1, 2 / 3, 0, 1 / 3),
    });
    expect(ka.bad_rate_b_approved).toEqual({
      rows: 3,
      known: 2,
      bad: 0,
      bad_rate: 0,
      ci: wilson(0, 2),
      ...cov(1, 2 / 3, 0, 1 / 3),
    });
    expect(mh.bad_rate_a_approved).toEqual({
      rows: 2,
      known: 2,
      bad: 2,
      bad_rate: 1,
      ci: wilson(2, 2),
      ...cov(0, 1, 1, 1),
    });
    expect(mh.bad_rate_b_approved).toEqual({
      rows: 2,
      known: 2,
      bad: 1,
      bad_rate: 0.5,
      ci: wilson(1, 2),
      ...cov(0, 1, 0.5, 0.5),
    });
  });
});

describe('hand-computed compare.csv', () => {
  it('one line per key, both sides, every results line exactly once, Excel-safe', () => {
    const text = readFileSync(join(outDir, 'compare.csv'), 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'key,a_row,b_row,match,a_decision,b_decision,a_loan_amount,b_loan_amount,amount_change,swap_class,outcome,segment',
    );
    expect(lines.slice(1)).toEqual([
      'k01,1,1,matched,Approve,Approve,1000,1000,0,both_approve,0,KA',
      'k02,2,2,matched,Approve,Approve,1000,1500,500,both_approve,0,KA',
      'k03,3,3,matched,Approve,Approve,2000,1500,-500,both_approve,1,MH',
      'k04,4,4,matched,Approve,Reject,2000,,,swap_out,1,MH',
      'k05,5,5,matched,Approve,Reject,3000,,,swap_out,,KA',
      'k06,6,6,matched,Reject,Approve,,1000,,swap_in,0,MH',
      'k07,7,7,matched,Reject,Reject,,,,both_reject,1,KA',
      'k08,8,8,matched,Reject,Proceed to Next Rule,,,,both_reject,0,MH',
      'k09,9,9,matched,Proceed to Next Rule,Approve,,2500,,swap_in,,KA',
      'k10,10,10,matched,(skipped),Reject,,,,both_reject,0,MH',
      `"'=HYPERLINK(""http://x"")",11,,only_a,Approve,,500,,,only_a,1,KA`,
      '<img src=x onerror=alert(1)>,,12,only_b,,Approve,,700,,only_b,0,MH',
      'k13,13,,duplicate,Reject,,,,,duplicate,0,KA',
      'k13,,13,duplicate,,Approve,,100,,duplicate,0,KA',
      'k13,,14,duplicate,,Reject,,,,duplicate,0,MH',
      ',15,,no_key,Reject,,,,,no_key,,KA',
    ]);
  });
});

describe('hand-computed report.html', () => {
  it('is self-contained, escapes input data and has every section', () => {
    const html = readFileSync(join(outDir, 'report.html'), 'utf8');
    expect(html).not.toContain(NASTY_KEY);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(/i);
    for (const h of [
      'Summary',
      'Stage bre',
      'Approval rates',
      'Decisions',
      'Decision crosstab (swap matrix)',
      'Loan amounts',
      'Offers',
      'Bad rates',
      'Segments by',
      'Rules failed',
      'Feature stability (PSI)',
      'Keys not compared',
    ]) {
      expect(html).toContain(`>${h}`);
    }
    expect(html).toContain('@media print');
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).toContain('band-major');
  });
});
