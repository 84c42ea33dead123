/**
 * The score statistics against values computed once by sklearn, scipy and numpy (and a brute-force DeLong
 * written from the 1988 paper) on 3,000 synthetic keys with ties, missing scores, unknown outcomes and
 * one-class segments: packages/backtest/scripts/backtest-fixtures.py wrote fixtures/score-stats.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aucFigures, PairedDelong } from '../src/score/auc.js';
import { decileFigures } from '../src/score/deciles.js';
import { ksFigures } from '../src/score/ks.js';
import { orient, oriented, tableOf, type Direction } from '../src/score/table.js';
import { tradeoff } from '../src/score/tradeoff.js';
import { chi2Sf } from '../src/stability/chi2.js';
import { binIndex, decileEdges, psi, wilson } from '../src/stats.js';

type Row = [string, number | null, number | null, number | null, number, 0 | 1 | null];
interface Expected {
  n_good: number;
  n_bad: number;
  n_unknown: number;
  missing: { good: number; bad: number; unknown: number };
  auc: number | null;
  gini: number | null;
  delong_var: number | null;
  auc_ci: [number, number] | null;
  ks: number | null;
  ks_at: number | null;
  ks_bad_cdf?: number;
  ks_good_cdf?: number;
  decile_edges: number[];
  deciles: Record<string, number | null>[];
  iv: number | null;
  tradeoff: Record<string, number | null>[];
  wilson_bad_rate: [number, number] | null;
}
interface Paired {
  n_good: number;
  n_bad: number;
  auc_a: number;
  auc_b: number;
  difference: number;
  se: number;
  ci: [number, number];
  z: number;
  p_value: number;
}
interface Fixture {
  columns: string[];
  directions: Record<string, Direction>;
  rows: Row[];
  expected: Record<string, Record<string, Expected>>;
  paired: Record<string, Record<string, Paired | null>>;
  psi: { edges: number[]; a: number[]; b: number[]; psi: number };
  chi2_sf: [number, number, number][];
}

const fx = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'score-stats.json'), 'utf8')) as Fixture;
const COL: Record<string, number> = { a: 1, b: 2, grade: 3 };
const datasets: Record<string, Row[]> = { all: fx.rows };
for (const seg of ['mixed', 'all_good', 'all_bad']) datasets[seg] = fx.rows.filter((r) => r[0] === seg);

const cases = Object.keys(fx.expected).flatMap((d) => Object.keys(fx.expected[d]).map((s) => [d, s] as const));

/** Relative closeness for figures of any size. */
function near(actual: number | null | undefined, expected: number | null, rel = 1e-10): void {
  if (expected === null) {
    expect(actual ?? null).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(expected)));
}

describe('score statistics vs sklearn / scipy / numpy (fixture)', () => {
  it('the fixture covers ties, missing scores, unknown outcomes and one-class segments', () => {
    expect(fx.rows.length).toBeGreaterThanOrEqual(3000);
    expect(
      fx.expected.all.a.missing.good + fx.expected.all.a.missing.bad + fx.expected.all.a.missing.unknown,
    ).toBeGreaterThan(50);
    expect(fx.expected.all_good.a.auc).toBeNull();
    expect(fx.expected.all_bad.b.auc).toBeNull();
  });

  it.each(cases)('%s / %s', (dataset, score) => {
    const e = fx.expected[dataset][score];
    const dir = fx.directions[score];
    const rows = datasets[dataset];
    const c = COL[score];
    const missing = { good: 0, bad: 0, unknown: 0 };
    for (const r of rows) if (r[c] === null) missing[r[5] === 0 ? 'good' : r[5] === 1 ? 'bad' : 'unknown'] += 1;
    expect(missing).toEqual(e.missing);
    const t = tableOf(rows.filter((r) => r[c] !== null).map((r) => ({ score: r[c] as number, outcome: r[5] })));
    expect([t.nGood, t.nBad, t.nUnknown]).toEqual([e.n_good, e.n_bad, e.n_unknown]);

    const auc = aucFigures(oriented(t, dir));
    near(auc?.auc, e.auc);
    near(auc?.gini, e.gini);
    near(auc?.se === undefined || auc?.se === null ? null : auc.se ** 2, e.delong_var, 1e-9);
    near(auc?.ci?.lower, e.auc_ci?.[0] ?? null, 1e-9);
    near(auc?.ci?.upper, e.auc_ci?.[1] ?? null, 1e-9);

    const ks = ksFigures(t);
    near(ks?.ks, e.ks);
    expect(ks?.at_score ?? null).toBe(e.ks_at);
    if (ks) {
      near(ks.bad_cdf, e.ks_bad_cdf as number);
      near(ks.good_cdf, e.ks_good_cdf as number);
    }

    const d = decileFigures(t, dir);
    expect(d.edges).toEqual(e.decile_edges);
    expect(d.rows).toHaveLength(e.deciles.length);
    d.rows.forEach((row, i) => {
      const x = e.deciles[i];
      expect([row.min, row.max, row.keys, row.good, row.bad]).toEqual([x.min, x.max, x.keys, x.good, x.bad]);
      for (const k of ['bad_rate', 'woe', 'cum_keys_share', 'cum_bad_share', 'cum_bad_rate'] as const)
        near(row[k], x[k]);
    });
    near(d.iv, e.iv);

    const tr = tradeoff(oriented(t, dir), dir);
    expect(tr.map((r) => [r.target, r.cutoff, r.approved, r.good, r.bad])).toEqual(
      e.tradeoff.map((x) => [x.target, x.cutoff, x.approved, x.good, x.bad]),
    );
    tr.forEach((r, i) => {
      near(r.bad_rate, e.tradeoff[i].bad_rate);
    });

    const w = wilson(t.nBad, t.nGood + t.nBad);
    near(w?.lower, e.wilson_bad_rate?.[0] ?? null, 1e-9);
    near(w?.upper, e.wilson_bad_rate?.[1] ?? null, 1e-9);
  });

  const pairCases = Object.entries({ b_vs_a: ['a', 'b'], grade_vs_a: ['a', 'grade'] }).flatMap(([name, [sa, sb]]) =>
    Object.keys(fx.paired[name]).map((d) => [name, d, sa, sb] as const),
  );

  it.each(pairCases)('paired DeLong %s on %s', (name, dataset, sa, sb) => {
    const e = fx.paired[name][dataset];
    const [ca, cb] = [COL[sa], COL[sb]];
    const [da, db] = [fx.directions[sa], fx.directions[sb]];
    const common = datasets[dataset].filter((r) => r[ca] !== null && r[cb] !== null && r[5] !== null);
    const ta = oriented(tableOf(common.map((r) => ({ score: r[ca] as number, outcome: r[5] }))), da);
    const tb = oriented(tableOf(common.map((r) => ({ score: r[cb] as number, outcome: r[5] }))), db);
    const p = new PairedDelong(ta, tb);
    for (const r of common) p.add(orient(r[ca] as number, da), orient(r[cb] as number, db), r[5] as 0 | 1);
    const got = p.result();
    if (e === null) {
      expect(got).toBeNull();
      return;
    }
    expect([got?.n_good, got?.n_bad]).toEqual([e.n_good, e.n_bad]);
    near(got?.auc_a, e.auc_a);
    near(got?.auc_b, e.auc_b);
    near(got?.difference, e.difference);
    near(got?.se, e.se, 1e-9);
    near(got?.ci?.lower, e.ci[0], 1e-9);
    near(got?.ci?.upper, e.ci[1], 1e-9);
    near(got?.z, e.z, 1e-9);
    // scipy's exact normal tail against the Chebyshev erfc (relative error < 1.2e-7).
    expect(Math.abs((got?.p_value as number) - e.p_value) / e.p_value).toBeLessThan(2e-7);
  });

  it('PSI over deciles of one period against another', () => {
    const base = fx.rows.filter((r) => r[4] === 0 && r[1] !== null).map((r) => r[1] as number);
    const edges = decileEdges(base);
    expect(edges).toEqual(fx.psi.edges);
    const count = (period: number): number[] => {
      const c = new Array<number>(edges.length + 2).fill(0);
      for (const r of fx.rows) if (r[4] === period) c[r[1] === null ? edges.length + 1 : binIndex(edges, r[1])] += 1;
      return c;
    };
    expect(count(0)).toEqual(fx.psi.a);
    expect(count(1)).toEqual(fx.psi.b);
    near(psi(count(0), count(1)), fx.psi.psi);
  });

  it.each(fx.chi2_sf)('χ² upper tail at %d with %i degrees of freedom', (x, df, sf) => {
    expect(Math.abs(chi2Sf(x, df) - sf) / sf).toBeLessThan(1e-10);
  });
});
