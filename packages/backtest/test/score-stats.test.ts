/**
 * Score statistics on cases small enough to work by hand (the arithmetic is in the comments). The same
 * functions are checked against sklearn/scipy on a few thousand keys in score-fixture.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { aucFigures, PairedDelong, placements } from '../src/score/auc.js';
import { coverage } from '../src/score/coverage.js';
import { decileFigures, ivBand } from '../src/score/deciles.js';
import { ksFigures } from '../src/score/ks.js';
import { erfc, twoSidedP } from '../src/score/normal.js';
import { indexOfValue, oriented, tableOf, type Direction } from '../src/score/table.js';
import { tradeoff } from '../src/score/tradeoff.js';

type O = 0 | 1 | null;
const tbl = (goods: number[], bads: number[], unknown: number[] = []) =>
  tableOf([
    ...goods.map((score) => ({ score, outcome: 0 as O })),
    ...bads.map((score) => ({ score, outcome: 1 as O })),
    ...unknown.map((score) => ({ score, outcome: null as O })),
  ]);

describe('score table', () => {
  it('groups ties and counts by outcome; non-numbers are not values', () => {
    const t = tableOf([
      { score: 2, outcome: 0 },
      { score: 1, outcome: 1 },
      { score: 2, outcome: 1 },
      { score: 2, outcome: null },
      { score: Number.NaN, outcome: 0 },
      { score: 3, outcome: 0 },
    ]);
    expect([...t.values]).toEqual([1, 2, 3]);
    expect([...t.good]).toEqual([0, 1, 1]);
    expect([...t.bad]).toEqual([1, 1, 0]);
    expect([...t.unknown]).toEqual([0, 1, 0]);
    expect([t.nGood, t.nBad, t.nUnknown]).toEqual([2, 2, 1]);
    expect(indexOfValue(t, 2)).toBe(1);
    expect(indexOfValue(t, 2.5)).toBe(-1);
  });

  it('orients a lower-is-better score by negating and reversing (0 stays 0)', () => {
    const o = oriented(tbl([0, 1], [5]), 'lower_is_better');
    expect([...o.values]).toEqual([-5, -1, 0]);
    expect(Object.is(o.values[2], 0)).toBe(true);
    expect([...o.good]).toEqual([0, 1, 1]);
  });
});

describe('AUC and DeLong, by hand', () => {
  // Goods at 3, 2, 2; bads at 2, 1 (higher is better). Kernel ψ = 1, ½, 0 for good >, =, < bad.
  //   V10 (goods): 3 → (1+1)/2 = 1; 2 → (½+1)/2 = ¾; 2 → ¾.  AUC = (1 + ¾ + ¾)/3 = 5/6.
  //   V01 (bads):  2 → (1+½+½)/3 = 2/3; 1 → 1.
  //   S10 = ((1/6)² + 2·(1/12)²)/2 = 1/48;  S01 = ((1/6)² + (1/6)²)/1 = 1/18.
  //   var = S10/3 + S01/2 = 1/144 + 4/144 = 5/144; se = √5/12.
  const t = tbl([3, 2, 2], [2, 1]);

  it('structural components', () => {
    const p = placements(t)!;
    // Values 1, 2, 3: goods sit at 2 and 3, bads at 1 and 2 (the other entries are never looked up).
    expect([p.good[1], p.good[2]]).toEqual([0.75, 1]);
    expect(p.bad[0]).toBe(1);
    expect(p.bad[1]).toBeCloseTo(2 / 3, 14);
    expect(p.auc).toBeCloseTo(5 / 6, 14);
  });

  it('AUC, Gini and the 95% interval', () => {
    const f = aucFigures(t)!;
    expect(f.auc).toBeCloseTo(5 / 6, 14);
    expect(f.gini).toBeCloseTo(2 / 3, 14);
    expect(f.se).toBeCloseTo(Math.sqrt(5) / 12, 14);
    expect(f.ci!.lower).toBeCloseTo(5 / 6 - (1.959963984540054 * Math.sqrt(5)) / 12, 12);
    expect(f.ci!.upper).toBe(1);
    expect(f.gini_ci!.upper).toBe(1);
  });

  it('is null with one class, and has no interval with a single good or bad', () => {
    expect(aucFigures(tbl([1, 2], []))).toBeNull();
    expect(aucFigures(tbl([], [1, 2]))).toBeNull();
    expect(aucFigures(tbl([2], [1, 1]))).toMatchObject({ auc: 1, se: null, ci: null });
  });

  it.each<[number[], number[], number]>([
    [[2, 3], [0, 1], 1],
    [[0, 1], [2, 3], 0],
    [[1, 1], [1, 1], 0.5],
    [[1, 2], [1, 2], 0.5],
  ])('goods %j, bads %j: AUC %d', (g, b, auc) => {
    expect(aucFigures(tbl(g, b))!.auc).toBe(auc);
  });

  it('turns a lower-is-better score around', () => {
    expect(aucFigures(oriented(tbl([1, 2], [3, 4]), 'lower_is_better'))!.auc).toBe(1);
  });
});

describe('paired DeLong, by hand', () => {
  // Five keys (A, B): goods g1 (3, 2), g2 (2, 3), g3 (2, 1); bads b1 (2, 1), b2 (1, 2).
  //   A as above: AUC 5/6, S10_A = 1/48, S01_A = 1/18, var A = 5/144.
  //   B: V10 g1 ¾, g2 1, g3 ¼ (AUC 2/3); V01 b1 5/6, b2 ½. S10_B = (1/144+16/144+25/144)/2 = 7/48, S01_B = 1/18,
  //      var B = 7/144 + 4/144 = 11/144.
  //   Cross: S10_AB = ((1/6)(1/12) + (−1/12)(1/3) + (−1/12)(−5/12))/2 = 1/96; S01_AB = ((−1/6)(1/6) + (1/6)(−1/6))/1 = −1/18.
  //   cov = (1/96)/3 + (−1/18)/2 = −7/288; var(B − A) = 5/144 + 11/144 + 14/288 = 23/144.
  //   difference −1/6, se √23/12, z = −2/√23 = −0.41703, p = 0.67666.
  const keys: [number, number, 0 | 1][] = [
    [3, 2, 0],
    [2, 3, 0],
    [2, 1, 0],
    [2, 1, 1],
    [1, 2, 1],
  ];
  const ta = tableOf(keys.map(([a, , o]) => ({ score: a, outcome: o })));
  const tb = tableOf(keys.map(([, b, o]) => ({ score: b, outcome: o })));

  it('difference, standard error, z and p', () => {
    const p = new PairedDelong(ta, tb);
    for (const [a, b, o] of keys) p.add(a, b, o);
    const r = p.result()!;
    expect(r.auc_a).toBeCloseTo(5 / 6, 14);
    expect(r.auc_b).toBeCloseTo(2 / 3, 14);
    expect(r.difference).toBeCloseTo(-1 / 6, 14);
    expect(r.se).toBeCloseTo(Math.sqrt(23) / 12, 14);
    expect(r.z).toBeCloseTo(-2 / Math.sqrt(23), 12);
    expect(r.p_value).toBeCloseTo(0.676659, 5);
    expect(r.identical).toBe(false);
    expect([r.n_good, r.n_bad]).toEqual([3, 2]);
  });

  it('identical scores: difference 0, no test (p null), flagged identical', () => {
    const p = new PairedDelong(ta, ta);
    for (const [a, , o] of keys) p.add(a, a, o);
    expect(p.result()).toMatchObject({ difference: 0, se: 0, z: null, p_value: null, identical: true });
  });

  it('refuses tables of different keys and a key not added', () => {
    expect(() => new PairedDelong(ta, tableOf([{ score: 1, outcome: 0 }]))).toThrow(RangeError);
    const p = new PairedDelong(ta, tb);
    p.add(3, 2, 0);
    expect(() => p.result()).toThrow(/every key/);
  });
});

describe('normal tail', () => {
  it.each([
    [0, 1],
    [1.959963984540054, 0.05],
    [1, 0.3173105078629141],
    [3, 0.0026997960632601866],
    [6, 1.973175290075e-9],
  ])('P(|Z| ≥ %d) = %d', (z, p) => {
    expect(Math.abs(twoSidedP(z) - p) / p).toBeLessThan(2e-7);
    expect(twoSidedP(-z)).toBe(twoSidedP(z));
  });

  it('erfc is 2 − erfc(−x)', () => {
    expect(erfc(-0.5) + erfc(0.5)).toBeCloseTo(2, 12);
  });
});

describe('KS, by hand', () => {
  // Goods 3, 2, 2; bads 2, 1. F_bad: 1 → ½, 2 → 1, 3 → 1; F_good: 1 → 0, 2 → 2/3, 3 → 1. Gaps ½, 1/3, 0.
  it('peaks at 1 with D = ½', () => {
    expect(ksFigures(tbl([3, 2, 2], [2, 1]))).toEqual({ ks: 0.5, at_score: 1, bad_cdf: 0.5, good_cdf: 0 });
  });

  it('takes the smallest score when the peak ties, and is null with one class', () => {
    // Goods 2, 4; bads 1, 3. F_bad: 1 → ½, 2 → ½, 3 → 1, 4 → 1; F_good: 0, ½, ½, 1. Gaps ½, 0, ½, 0.
    expect(ksFigures(tbl([2, 4], [1, 3]))).toEqual({ ks: 0.5, at_score: 1, bad_cdf: 0.5, good_cdf: 0 });
    expect(ksFigures(tbl([1], []))).toBeNull();
  });
});

describe('deciles and IV, by hand', () => {
  it('twenty distinct scores: ten bins of two, riskiest first', () => {
    const goods = Array.from({ length: 16 }, (_, i) => i + 5);
    const d = decileFigures(tbl(goods, [1, 2, 3, 4]), 'higher_is_better');
    expect(d.edges).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(d.rows.map((r) => [r.min, r.max, r.keys, r.bad])).toEqual([
      [1, 2, 2, 2],
      [3, 4, 2, 2],
      [5, 6, 2, 0],
      [7, 8, 2, 0],
      [9, 10, 2, 0],
      [11, 12, 2, 0],
      [13, 14, 2, 0],
      [15, 16, 2, 0],
      [17, 18, 2, 0],
      [19, 20, 2, 0],
    ]);
    expect(d.rows[1]).toMatchObject({ cum_keys_share: 0.2, cum_bad_share: 1, cum_bad_rate: 1 });
    // IV: bins 1-2 have bad share ½ each and good share floored at 1e-4; bins 3-10 good share 1/8, bad share floored:
    //   2·(½ − 1e-4)·ln(½/1e-4) + 8·(⅛ − 1e-4)·ln(⅛/1e-4)
    const iv = 2 * (0.5 - 1e-4) * Math.log(0.5 / 1e-4) + 8 * (0.125 - 1e-4) * Math.log(0.125 / 1e-4);
    expect(d.iv).toBeCloseTo(iv, 12);
    expect(ivBand(d.iv)).toBe('strong');
  });

  it('merges cut points on ties; lower-is-better lists the highest scores first; unknown outcomes count as keys', () => {
    // Grades 1×6, 2×2, 3×2: q1..q6 = 1, q7, q8 = 2, q9 = 3 → bins ≤1, (1,2], (2,3].
    const d = decileFigures(tbl([1, 1, 1, 1, 2, 2, 3], [3], [1, 1]), 'lower_is_better');
    expect(d.edges).toEqual([1, 2, 3]);
    expect(d.rows.map((r) => [r.min, r.keys, r.good, r.bad, r.unknown, r.bad_rate])).toEqual([
      [3, 2, 1, 1, 0, 0.5],
      [2, 2, 2, 0, 0, 0],
      [1, 6, 4, 0, 2, 0],
    ]);
    expect(d.rows[2].woe).toBeCloseTo(Math.log(4 / 7 / 1e-4), 12);
  });

  it.each([
    [0.01, 'not predictive'],
    [0.05, 'weak'],
    [0.2, 'medium'],
    [0.5, 'strong'],
    [null, null],
  ])('IV %s reads %s', (iv, band) => {
    expect(ivBand(iv)).toBe(band);
  });
});

describe('trade-off, by hand', () => {
  it('approves the best ⌈p·N⌉ keys and never splits a tie at the cut-off', () => {
    // 10 keys: scores 10 (bad), 9, 9, 9 (goods), 8 … 3 with one bad at 5 and one unknown at 3.
    const t = tbl([9, 9, 9, 8, 7, 6, 4], [10, 5], [3]);
    const rows = tradeoff(oriented(t, 'higher_is_better'), 'higher_is_better');
    expect(rows).toHaveLength(20);
    expect(rows[0]).toEqual({
      target: 0.05,
      cutoff: 10,
      approved: 1,
      approval_rate: 0.1,
      good: 0,
      bad: 1,
      unknown: 0,
      bad_rate: 1,
    });
    // 15% and 20% need 2 keys: the cut-off 9 takes all three 9s.
    expect(rows[2]).toMatchObject({ cutoff: 9, approved: 4, bad_rate: 0.25 });
    expect(rows[9]).toMatchObject({ target: 0.5, cutoff: 8, approved: 5, bad: 1 });
    expect(rows[19]).toMatchObject({
      target: 1,
      cutoff: 3,
      approved: 10,
      good: 7,
      bad: 2,
      unknown: 1,
      bad_rate: 2 / 9,
    });
  });

  it("gives cut-offs on the user's scale for a lower-is-better score", () => {
    const t = tbl([1, 2], [5], [3]);
    const dir: Direction = 'lower_is_better';
    const rows = tradeoff(oriented(t, dir), dir);
    expect(rows[4]).toMatchObject({ target: 0.25, cutoff: 1, approved: 1 });
    expect(rows[19]).toMatchObject({ cutoff: 5, approved: 4 });
    expect(tradeoff(tableOf([]), dir)).toEqual([]);
  });
});

describe('outcome coverage', () => {
  it.each([
    [10, 8, 2, { coverage: 0.8, unknown: 2, bad_rate_best: 0.2, bad_rate_worst: 0.4 }],
    [4, 0, 0, { coverage: 0, unknown: 4, bad_rate_best: 0, bad_rate_worst: 1 }],
    [0, 0, 0, { coverage: null, unknown: 0, bad_rate_best: null, bad_rate_worst: null }],
  ])('%i keys, %i known, %i bad', (rows, known, bad, expected) => {
    expect(coverage(rows, known, bad)).toEqual(expected);
  });
});
