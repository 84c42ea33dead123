/**
 * The design-based estimators on cases small enough to work by hand (the arithmetic is in the comments), the
 * design checks, the rescaling bootstrap against the linearised variance it must reproduce, and the weighted AUC
 * and KS against the unweighted statistics (checked against sklearn and scipy) on the sample with every unit
 * repeated w times. R's survey package is the reference for the rest: design-fixture.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { bootstrap, replicateSe } from '../src/design/bootstrap.js';
import {
  checkDesign,
  coveredPopulation,
  DesignError,
  type Design,
  type LonelyPsu,
  type Stratum,
} from '../src/design/design.js';
import { degreesOfFreedom, mean, NO_VARIATION, ratio, total } from '../src/design/estimators.js';
import { Random } from '../src/design/rng.js';
import { prepareScore, weightedAuc, weightedKs } from '../src/design/weighted-score.js';
import { aucFigures } from '../src/score/auc.js';
import { ksFigures } from '../src/score/ks.js';
import { Z95 } from '../src/stats.js';
import { oriented, tableOf } from '../src/score/table.js';

const f64 = (xs: readonly number[]): Float64Array => Float64Array.from(xs);
function design(strata: Stratum[], unitStratum: readonly number[]): Design {
  return checkDesign({ strata, unitStratum: Int32Array.from(unitStratum) });
}

describe('estimators, worked by hand', () => {
  // h1: N = 10, n = 4, y = 1 0 1 1 (w = 2.5); h2: N = 6, n = 2, y = 0 1 (w = 3).
  const strata: Stratum[] = [
    { name: 'h1', population: 10, sampled: 4 },
    { name: 'h2', population: 6, sampled: 2 },
  ];
  const d = design(strata, [0, 0, 0, 0, 1, 1]);
  const y = f64([1, 0, 1, 1, 0, 1]);

  it('total: Σ w·y = 2.5·3 + 3·1 = 10.5; V = Σ (1 − f)·N²·s²/n = 0.6·100·0.25/4 + (2/3)·36·0.5/2 = 3.75 + 6', () => {
    const t = total(d, y, 'average');
    expect(t.estimate).toBeCloseTo(10.5, 12);
    expect(t.se).toBeCloseTo(Math.sqrt(9.75), 12);
    expect(t.ci?.lower).toBeCloseTo(10.5 - Z95 * Math.sqrt(9.75), 12);
    expect(t.ci?.upper).toBeCloseTo(10.5 + Z95 * Math.sqrt(9.75), 12);
  });

  it('mean: 10.5 / 16; V = 9.75 / 16² (N is known: Σ N_h)', () => {
    const m = mean(d, y, 'average');
    expect(m?.estimate).toBeCloseTo(10.5 / 16, 12);
    expect(m?.se).toBeCloseTo(Math.sqrt(9.75) / 16, 12);
  });

  it('a domain: a failed unit of h1 is a zero in the variance, not a smaller stratum', () => {
    // Units 1..3 of h1 in the domain (y = 1 1 1), the 4th failed: z = 2.5 2.5 2.5 0, mean 1.875,
    // Σ(z − z̄)² = 3·0.625² + 1.875² = 4.6875; V = 0.6·4/3·4.6875 = 3.75.
    const dom = design(strata, [0, 0, 0]);
    const t = total(dom, f64([1, 1, 1]), 'average');
    expect(t.estimate).toBeCloseTo(7.5, 12);
    expect(t.se).toBeCloseTo(Math.sqrt(3.75), 12);
    // h2 has no unit in the domain: the estimates speak for h1's 10 rows.
    expect(coveredPopulation(dom)).toBe(10);
  });

  it('ratio: R = Σwy/Σwx; z = w(y − Rx)/X', () => {
    // x = 1 1 0 1 | 1 1, y = 1 0 0 1 | 0 1: Y = 2.5·2 + 3 = 8, X = 2.5·3 + 6 = 13.5, R = 8/13.5.
    const x = f64([1, 1, 0, 1, 1, 1]);
    const yy = f64([1, 0, 0, 1, 0, 1]);
    const R = 8 / 13.5;
    const z = [1, 0, 0, 1, 0, 1].map(
      (v, i) => ([2.5, 2.5, 2.5, 2.5, 3, 3][i] * (v - R * [1, 1, 0, 1, 1, 1][i])) / 13.5,
    );
    const ss = (zs: number[]): number => {
      const m = zs.reduce((s, v) => s + v, 0) / zs.length;
      return zs.reduce((s, v) => s + (v - m) ** 2, 0);
    };
    const V = 0.6 * (4 / 3) * ss(z.slice(0, 4)) + (2 / 3) * 2 * ss(z.slice(4));
    const r = ratio(d, yy, x, 'average');
    expect(r?.estimate).toBeCloseTo(R, 12);
    expect(r?.se).toBeCloseTo(Math.sqrt(V), 12);
    expect(ratio(d, yy, new Float64Array(6), 'average')).toBeNull();
  });

  it('a stratum sampled whole adds no variance; bounds clip the interval', () => {
    const whole = design([{ name: 'all', population: 3, sampled: 3 }], [0, 0, 0]);
    const t = total(whole, f64([1, 5, 9]), 'average');
    expect(t).toEqual({ estimate: 15, se: 0, ci: { lower: 15, upper: 15 } });
    const m = mean(d, y, 'average', { lower: 0, upper: 0.7 });
    expect(m?.ci?.upper).toBe(0.7);
  });

  it('no variation in a sample that did not take every row: no interval, and a note saying why', () => {
    const none = f64([0, 0, 0, 0, 0, 0]);
    const t = total(d, none, 'average');
    expect(t).toEqual({ estimate: 0, se: 0, ci: null, note: NO_VARIATION });
    expect(mean(d, f64([1, 1, 1, 1, 1, 1]), 'average')?.ci).toBeNull();
  });

  it('degrees of freedom: units less strata', () => {
    expect(degreesOfFreedom(d)).toBe(4);
  });
});

describe('a lonely stratum (n_h = 1 < N_h): R survey.lonely.psu', () => {
  // h1 as above (V_h1 = 3.75 for the total of y = 1 0 1 1), h2: N = 5, n = 1, y = 1 (w = 5), h3 empty.
  const strata: Stratum[] = [
    { name: 'h1', population: 10, sampled: 4 },
    { name: 'h2', population: 5, sampled: 1 },
    { name: 'h3', population: 7, sampled: 0 },
  ];
  const d = design(strata, [0, 0, 0, 0, 1]);
  const y = f64([1, 0, 1, 1, 1]);
  const cases: [LonelyPsu, number][] = [
    // average: h2 gets the mean variance of the strata that have one: 3.75 · 2 strata / 1.
    ['average', 7.5],
    // adjust: h2's z = 5 is taken from 0, times f = 0.8: 3.75 + 0.8·25.
    ['adjust', 3.75 + 20],
    // remove: h2 adds nothing.
    ['remove', 3.75],
  ];
  for (const [lonely, V] of cases) {
    it(`${lonely}: V = ${V}`, () => {
      const t = total(d, y, lonely);
      expect(t.estimate).toBeCloseTo(12.5, 12);
      expect(t.se).toBeCloseTo(Math.sqrt(V), 12);
    });
  }

  it('average with nothing to average: no standard error', () => {
    const only = design([{ name: 'h2', population: 5, sampled: 1 }], [0]);
    expect(total(only, f64([1]), 'average').se).toBeNull();
    expect(total(only, f64([1]), 'average').ci).toBeNull();
  });
});

describe('checkDesign', () => {
  const cases: [string, Stratum[], number[], RegExp][] = [
    [
      'sample above population',
      [{ name: 'a', population: 2, sampled: 3 }],
      [],
      /population ≥ sample ≥ 0, got population 2 and sample 3/,
    ],
    ['fractional counts', [{ name: 'a', population: 2.5, sampled: 1 }], [], /whole numbers/],
    ['an empty population', [{ name: 'a', population: 0, sampled: 0 }], [], /at least 1, got 0/],
    [
      'more units than sampled',
      [{ name: 'a', population: 5, sampled: 1 }],
      [0, 0],
      /at most 1 sampled units in stratum 'a', got 2/,
    ],
    ['an unknown stratum', [{ name: 'a', population: 5, sampled: 1 }], [1], /one of the 1 strata, got stratum index 1/],
  ];
  for (const [what, strata, units, message] of cases) {
    it(`refuses ${what}`, () => {
      expect(() => design(strata, units)).toThrow(DesignError);
      expect(() => design(strata, units)).toThrow(message);
    });
  }
});

/** A domain of a synthetic stratified sample: strata at small and large sampling fractions, failed units. */
function synthetic(seed: string): { d: Design; y: Float64Array; x: Float64Array } {
  const rng = new Random(seed);
  const strata: Stratum[] = [];
  const unitStratum: number[] = [];
  const y: number[] = [];
  const x: number[] = [];
  const shapes: [number, number][] = [
    [40, 36],
    [500, 20],
    [2000, 60],
    [90, 9],
    [12, 2],
    [3, 3],
    [300, 150],
  ];
  shapes.forEach(([N, n], h) => {
    strata.push({ name: `h${h}`, population: N, sampled: n });
    const p = 0.2 + 0.1 * h;
    for (let i = 0; i < n; i += 1) {
      if (rng.below(20) === 0) continue; // a failed row: outside the domain
      unitStratum.push(h);
      const xi = rng.below(100) < 70 ? 1 : 0;
      x.push(xi);
      y.push(xi && rng.below(1000) < p * 1000 ? 1 : 0);
    }
  });
  return { d: design(strata, unitStratum), y: f64(y), x: f64(x) };
}

describe('rescaling bootstrap (Rao–Wu, m_h = n_h − 1)', () => {
  it('reproduces the linearised standard error of a total and of a ratio, fpc included', () => {
    const { d, y, x } = synthetic('boot-1');
    const B = 4000;
    const { full, replicates } = bootstrap(d, { replicates: B, seed: 'test' }, (w) => {
      let ty = 0;
      let tx = 0;
      for (let i = 0; i < w.length; i += 1) {
        ty += w[i] * y[i];
        tx += w[i] * x[i];
      }
      return [ty, ty / tx];
    });
    const t = total(d, y, 'average');
    const r = ratio(d, y, x, 'average');
    expect(full[0]).toBeCloseTo(t.estimate, 9);
    expect(full[1]).toBeCloseTo(r?.estimate as number, 12);
    // The bootstrap SE's Monte Carlo error at B = 4000 is about 1/√8000 ≈ 1.1% of it.
    expect((replicateSe(d, replicates[0]) as number) / (t.se as number)).toBeGreaterThan(0.95);
    expect((replicateSe(d, replicates[0]) as number) / (t.se as number)).toBeLessThan(1.05);
    expect((replicateSe(d, replicates[1]) as number) / (r?.se as number)).toBeGreaterThan(0.94);
    expect((replicateSe(d, replicates[1]) as number) / (r?.se as number)).toBeLessThan(1.06);
  });

  it('a plain with-replacement bootstrap would not: the fpc matters in a stratum sampled at 90%', () => {
    // Only h0 (N = 40, n = 36): its linearised variance carries f = 0.1; without the fpc it would be 10 times larger.
    const d = design(
      [{ name: 'h0', population: 40, sampled: 36 }],
      Array.from({ length: 36 }, () => 0),
    );
    const y = f64(Array.from({ length: 36 }, (_, i) => (i % 3 === 0 ? 1 : 0)));
    const { replicates } = bootstrap(d, { replicates: 4000, seed: 'fpc' }, (w) => [
      w.reduce((s, wi, i) => s + wi * y[i], 0),
    ]);
    const se = replicateSe(d, replicates[0]) as number;
    expect(se / (total(d, y, 'average').se as number)).toBeGreaterThan(0.95);
    expect(se / (total(d, y, 'average').se as number)).toBeLessThan(1.05);
  });

  it('is reproducible from its seed, keeps weights non-negative and unbiased, and leaves whole strata alone', () => {
    const { d, y } = synthetic('boot-2');
    const stat = (w: Float64Array): number[] => [
      w.reduce((s, wi, i) => s + wi * y[i], 0),
      Math.min(...w),
      w[w.length - 1],
    ];
    const a = bootstrap(d, { replicates: 300, seed: 's' }, stat);
    const b = bootstrap(d, { replicates: 300, seed: 's' }, stat);
    const c = bootstrap(d, { replicates: 300, seed: 't' }, stat);
    expect(a.replicates[0]).toEqual(b.replicates[0]);
    expect(a.replicates[0]).not.toEqual(c.replicates[0]);
    expect(Math.min(...a.replicates[1])).toBeGreaterThanOrEqual(0);
    // The last unit is in h6 (N = 300, n = 150: f = 0.5), resampled; the mean of its weight stays 2.
    const lastMean = a.replicates[2].reduce((s, v) => s + v, 0) / 300;
    expect(lastMean).toBeGreaterThan(1.8);
    expect(lastMean).toBeLessThan(2.2);
    const whole = design([{ name: 'all', population: 3, sampled: 3 }], [0, 0, 0]);
    const w = bootstrap(whole, { replicates: 50, seed: 's' }, (ws) => [ws[0] + ws[1] + ws[2]]);
    expect(new Set(w.replicates[0])).toEqual(new Set([3]));
    expect(replicateSe(whole, w.replicates[0])).toBe(0);
  });

  it('gives no standard error for a statistic undefined in more than a tenth of the replicates', () => {
    const { d } = synthetic('boot-3');
    const undefinedOften = f64(Array.from({ length: 100 }, (_, i) => (i % 5 === 0 ? Number.NaN : i)));
    expect(replicateSe(d, undefinedOften)).toBeNull();
    const rarely = f64(Array.from({ length: 100 }, (_, i) => (i === 0 ? Number.NaN : i)));
    expect(replicateSe(d, rarely)).toBeGreaterThan(0);
  });
});

describe('weighted AUC and KS', () => {
  // Scores with ties, outcomes known and unknown (−1), whole-number weights.
  const score = f64([600, 650, 650, 700, 720, 720, 720, 750, 780, 800, Number.NaN, 690]);
  const outcome = Int8Array.from([1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, -1]);
  const weight = f64([3, 1, 2, 5, 1, 4, 2, 1, 3, 2, 7, 9]);

  /** The same sample with every unit repeated w times, as the unweighted statistics see it. */
  function expanded(): { score: number; outcome: 0 | 1 | null }[] {
    const out: { score: number; outcome: 0 | 1 | null }[] = [];
    score.forEach((s, i) => {
      for (let k = 0; k < weight[i]; k += 1)
        out.push({ score: s, outcome: outcome[i] === -1 ? null : (outcome[i] as 0 | 1) });
    });
    return out;
  }

  for (const direction of ['higher_is_better', 'lower_is_better'] as const) {
    it(`AUC (${direction}) equals the unweighted AUC of the expanded sample`, () => {
      const p = prepareScore(score, outcome, direction);
      const want = aucFigures(oriented(tableOf(expanded()), direction))?.auc as number;
      expect(weightedAuc(p, weight)).toBeCloseTo(want, 12);
    });
  }

  it('KS equals the unweighted KS of the expanded sample, at the same score', () => {
    const p = prepareScore(score, outcome, 'higher_is_better');
    const want = ksFigures(tableOf(expanded()));
    const got = weightedKs(p, weight);
    expect(got?.ks).toBeCloseTo(want?.ks as number, 12);
    expect(got?.at_score).toBe(want?.at_score);
    expect(got?.bad_cdf).toBeCloseTo(want?.bad_cdf as number, 12);
  });

  it('hand case: goods 2 (w 1) and 3 (w 2), bads 1 (w 1) and 3 (w 1): AUC = (1·1 + 2·(1 + ½)) / (3·2) = 2/3', () => {
    const p = prepareScore(f64([2, 3, 1, 3]), Int8Array.from([0, 0, 1, 1]), 'higher_is_better');
    expect(weightedAuc(p, f64([1, 2, 1, 1]))).toBeCloseTo(2 / 3, 15);
    // F_bad(1) = ½, F_good(1) = 0; F_bad(2) = ½, F_good(2) = ⅓; F(3) = 1 both: KS = ½ at 1.
    expect(weightedKs(p, f64([1, 2, 1, 1]))).toEqual({ ks: 0.5, at_score: 1, bad_cdf: 0.5, good_cdf: 0 });
  });

  it('no good or no bad weight: undefined', () => {
    const p = prepareScore(f64([1, 2]), Int8Array.from([0, 0]), 'higher_is_better');
    expect(weightedAuc(p, f64([1, 1]))).toBeNaN();
    expect(weightedKs(p, f64([1, 1]))).toBeNull();
    const q = prepareScore(f64([1, 2]), Int8Array.from([0, 1]), 'higher_is_better');
    expect(weightedAuc(q, f64([1, 0]))).toBeNaN();
  });
});
