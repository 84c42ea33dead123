/**
 * The streaming path of the score statistics: `compare` over two run folders made from the fixture's 3,000 keys
 * (A's results carry score a, B's carry score b, both carry the grade; outcome and application date in the
 * input) must give the figures sklearn / scipy gave for the same keys
 * (packages/backtest/test/fixtures/score-stats.json).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCompare, type CompareJson, type ComparisonJson } from '../src/compare.js';
import { tempDir } from '../../../test/helpers/temp.js';
import { wf, writeRunFolder } from './fixtures.js';

type Row = [string, number | null, number | null, number | null, number, 0 | 1 | null];
const fx = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'score-stats.json'), 'utf8')) as {
  rows: Row[];
  expected: {
    all: Record<
      string,
      Record<string, unknown> & {
        auc: number;
        delong_var: number;
        ks: number;
        ks_at: number;
        iv: number;
        n_good: number;
        n_bad: number;
        n_unknown: number;
        missing: Record<string, number>;
        deciles: unknown[];
        tradeoff: { cutoff: number; approved: number }[];
      }
    >;
  };
  paired: {
    b_vs_a: {
      all: { auc_a: number; auc_b: number; se: number; z: number; p_value: number; n_good: number; n_bad: number };
    };
  };
};

const approveA = (r: Row) => r[1] !== null && r[1] >= 680;
const approveB = (r: Row) => r[2] !== null && r[2] >= 0.5;
let report: CompareJson;
let c: ComparisonJson;
let csv: string[];

beforeAll(async () => {
  const root = tempDir();
  const input = join(root, 'input.csv');
  writeFileSync(
    input,
    'reference_id,segment,app_date,bad\n' +
      fx.rows.map((r, i) => `k${i + 1},${r[0]},${r[4] === 0 ? '2025-01-15' : '2025-02-15'},${r[5] ?? ''}\n`).join(''),
  );
  const result = (r: Row, side: 'a' | 'b') => {
    const extra: Record<string, unknown> = { 's.grade': r[3] };
    if ((side === 'a' ? r[1] : r[2]) !== null) extra['s.score'] = side === 'a' ? r[1] : r[2];
    const approve = side === 'a' ? approveA(r) : approveB(r);
    return wf(approve ? 'Approve' : 'Reject', approve ? 1000 : null, extra);
  };
  const a = writeRunFolder(join(root, 'a'), {
    lines: fx.rows.map((r, i) => ({ row: i + 1, key: `k${i + 1}`, stages: { bre: result(r, 'a') } })),
    inputPath: input,
  });
  const b = writeRunFolder(join(root, 'b'), {
    lines: fx.rows.map((r, i) => ({ row: i + 1, key: `k${i + 1}`, stages: { bre: result(r, 'b') } })),
    inputPath: input,
  });
  const out = join(root, 'cmp');
  const r = await runCompare({
    outA: a,
    outB: b,
    out,
    outcome: 'bad',
    score: ['s.score', 's.grade'],
    scoreDirection: ['s.grade=lower'],
    period: 'app_date',
    buckets: 3,
  });
  report = r.report;
  c = report.comparisons[0];
  csv = readFileSync(r.files.csv, 'utf8').trimEnd().split('\n');
});

const rel = (x: number | null | undefined, y: number, tol = 1e-9): void => {
  expect(Math.abs((x as number) - y)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(y)));
};

describe('compare --score over the fixture keys (streamed, three buckets)', () => {
  it('A is score a, B is score b: the fixture figures', () => {
    const s = c.scores!.find((x) => x.label === 's.score')!;
    expect(s).toMatchObject({ field_a: 's.score', field_b: 's.score', direction: 'higher_is_better', keys: 3000 });
    for (const [side, name] of [
      ['a', 'a'],
      ['b', 'b'],
    ] as const) {
      const e = fx.expected.all[name];
      const f = s[side];
      expect(f.scored).toEqual({
        keys: e.n_good + e.n_bad + e.n_unknown,
        good: e.n_good,
        bad: e.n_bad,
        unknown: e.n_unknown,
      });
      expect(f.missing).toEqual({ keys: e.missing.good + e.missing.bad + e.missing.unknown, ...e.missing });
      rel(f.power?.auc, e.auc, 1e-12);
      rel((f.power?.se as number) ** 2, e.delong_var);
      rel(f.ks?.ks, e.ks, 1e-12);
      expect(f.ks?.at_score).toBe(e.ks_at);
      rel(f.iv, e.iv);
      expect(f.deciles.map((d) => [d.min, d.max, d.keys, d.bad])).toEqual(
        (e.deciles as { min: number; max: number; keys: number; bad: number }[]).map((d) => [
          d.min,
          d.max,
          d.keys,
          d.bad,
        ]),
      );
      expect(f.tradeoff.map((t) => [t.cutoff, t.approved])).toEqual(e.tradeoff.map((t) => [t.cutoff, t.approved]));
    }
    const p = fx.paired.b_vs_a.all;
    expect([s.paired?.n_good, s.paired?.n_bad]).toEqual([p.n_good, p.n_bad]);
    rel(s.paired?.auc_a, p.auc_a, 1e-12);
    rel(s.paired?.auc_b, p.auc_b, 1e-12);
    rel(s.paired?.se, p.se);
    rel(s.paired?.z, p.z);
    expect(Math.abs((s.paired?.p_value as number) - p.p_value) / p.p_value).toBeLessThan(2e-7);
    expect(s.paired?.identical).toBe(false);
    expect(s.keys_differing).toBe(fx.rows.filter((r) => !(r[1] === null && r[2] === null)).length);
  });

  it('operating points: each strategy over the keys with that score', () => {
    const s = c.scores!.find((x) => x.label === 's.score')!;
    const scoredA = fx.rows.filter((r) => r[1] !== null);
    const point = (rows: Row[], approve: (r: Row) => boolean) => {
      const ap = rows.filter(approve);
      const good = ap.filter((r) => r[5] === 0).length;
      const bad = ap.filter((r) => r[5] === 1).length;
      return {
        approved: ap.length,
        approval_rate: ap.length / rows.length,
        good,
        bad,
        unknown: ap.length - good - bad,
        bad_rate: bad / (good + bad),
      };
    };
    expect(s.a.operating_points).toEqual({ a: point(scoredA, approveA), b: point(scoredA, approveB) });
  });

  it('the same grade on both sides: the lower-is-better fixture figures, and no test of a difference', () => {
    const g = c.scores!.find((x) => x.label === 's.grade')!;
    const e = fx.expected.all.grade;
    expect(g.direction).toBe('lower_is_better');
    rel(g.a.power?.auc, e.auc, 1e-12);
    rel(g.b.power?.auc, e.auc, 1e-12);
    expect(g.keys_differing).toBe(0);
    expect(g.paired).toMatchObject({ difference: 0, z: null, p_value: null, identical: true });
  });

  it('vintages: two months, counted from the rows', () => {
    const p = c.periods!;
    expect(p).toMatchObject({ column: 'app_date', unit: 'month', min_keys: 30 });
    expect(p.periods.map((x) => x.period)).toEqual(['2025-01', '2025-02']);
    for (const [i, per] of p.periods.entries()) {
      const rows = fx.rows.filter((r) => r[4] === i);
      expect(per.keys).toBe(rows.length);
      expect(per.small).toBe(false);
      expect(per.approval.a.count).toBe(rows.filter(approveA).length);
      expect(per.swap_in).toBe(rows.filter((r) => !approveA(r) && approveB(r)).length);
      const ap = rows.filter(approveB);
      expect(per.bad_rate_b_approved).toMatchObject({
        rows: ap.length,
        known: ap.filter((r) => r[5] !== null).length,
        bad: ap.filter((r) => r[5] === 1).length,
      });
    }
  });

  it('PSI over time of the result fields and CSI of the input columns', () => {
    const score = c.stability!.find((x) => x.name === 's.score' && x.source === 'a')!;
    expect(score.baseline).toBe('2025-01');
    expect(score.periods.map((x) => x.period)).toEqual(['2025-01', '2025-02']);
    expect(score.latest?.period).toBe('2025-02');
    // The grade is the same in both runs: listed once.
    expect(c.stability!.filter((x) => x.name === 's.grade').map((x) => x.source)).toEqual(['a=b']);
    const cols = report.input_stability!;
    expect(cols.columns.map((x) => x.name)).toEqual(['segment']);
    expect(cols.skipped).toEqual([
      { column: 'app_date', reason: 'period' },
      { column: 'bad', reason: 'outcome' },
      { column: 'reference_id', reason: 'key' },
    ]);
    expect(report.stability_top_movers!.length).toBeGreaterThan(0);
  });

  it('compare.csv: both scores of each key and its period', () => {
    expect(csv[0]).toBe(
      'key,a_row,b_row,match,a_decision,b_decision,a_loan_amount,b_loan_amount,amount_change,swap_class,score_a.s.score,score_b.s.score,score_a.s.grade,score_b.s.grade,outcome,period',
    );
    const r = fx.rows[0];
    const first = csv.find((l) => l.startsWith('k1,'))!.split(',');
    expect(first.slice(10)).toEqual(
      [r[1] ?? '', r[2] ?? '', r[3] ?? '', r[3] ?? '', r[5] ?? '', r[4] === 0 ? '2025-01' : '2025-02'].map(String),
    );
  });
});
