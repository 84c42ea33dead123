#!/usr/bin/python3
"""Writes packages/backtest/test/fixtures/score-stats.json: a few thousand synthetic scored keys and the back-test's score
statistics computed independently of bre-batch, by well-known implementations where one exists:

  AUC                 sklearn.metrics.roc_auc_score
  DeLong variance     written here from DeLong, DeLong & Clarke-Pearson (1988) by brute force (the m x n kernel
                      matrix), cross-checked against the midrank form of Sun & Xu (2014) with scipy.stats.rankdata
  paired DeLong       the same brute-force structural components; p-value scipy.stats.norm.sf
  KS                  scipy.stats.ks_2samp (two-sided D); the peak location checked to attain D
  deciles             numpy.quantile(method='inverted_cdf'), counted with numpy.searchsorted
  IV, WoE, PSI        numpy
  Wilson interval     scipy.stats.binomtest(...).proportion_ci(method='wilson')
  chi-square tail     scipy.stats.chi2.sf (the chance of a PSI shift)
  trade-off           numpy (sort, cut at the ceil(p*N)-th best key, ties kept together)

Run with Debian's interpreter (apt-get install -y python3-sklearn python3-scipy):

    /usr/bin/python3 packages/backtest/scripts/backtest-fixtures.py

The output is deterministic (seeded); CI does not run this script, the JSON is committed and
packages/backtest/test/score-fixture.test.ts compares bre-batch's figures with it.
"""
import json
import math
import os
import sys

import numpy as np
import scipy
import sklearn
from scipy import stats
from sklearn.metrics import roc_auc_score

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'score-stats.json')
Z95 = stats.norm.ppf(0.975)
EPS = 1e-4


def synthesise(seed=20251122):
    """Rows (segment, a, b, grade, period, outcome): ties, missing scores, unknown outcomes, one-class segments."""
    rng = np.random.default_rng(seed)
    rows = []
    plan = [('mixed', 2400), ('all_good', 300), ('all_bad', 300)]
    for segment, n in plan:
        for _ in range(n):
            quality = rng.normal()
            # A: a bureau-like score rounded to 10 points (about 60 distinct values: many ties).
            a = int(round((680 + 60 * quality + 40 * rng.normal()) / 10) * 10)
            # B: a sharper score on one decimal (fewer ties).
            b = round(0.5 + 0.18 * quality + 0.08 * rng.normal(), 1) + 0.0  # no -0.0
            # A risk grade where lower is better: 10 distinct values, heavy ties.
            grade = int(min(10, max(1, round(5.5 - 1.8 * quality + rng.normal()))))
            period = int(rng.integers(0, 2))
            if segment == 'mixed':
                p_bad = 1 / (1 + math.exp(2.3 + 1.2 * quality))
                outcome = 1 if rng.random() < p_bad else 0
                if rng.random() < 0.15:
                    outcome = None
            else:
                outcome = 0 if segment == 'all_good' else 1
                if rng.random() < 0.1:
                    outcome = None
            if rng.random() < 0.03:
                a = None
            if rng.random() < 0.04:
                b = None
            if rng.random() < 0.02:
                grade = None
            rows.append([segment, a, b, grade, period, outcome])
    return rows


SCORES = {'a': (1, 'higher_is_better'), 'b': (2, 'higher_is_better'), 'grade': (3, 'lower_is_better')}


def oriented(values, direction):
    v = np.asarray(values, dtype=float)
    return v if direction == 'higher_is_better' else -v


def wilson(k, n):
    if n == 0:
        return None
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method='wilson')
    return [float(ci.low), float(ci.high)]


def structural_components(goods, bads):
    """DeLong (1988) V10 (per good) and V01 (per bad) by the definition: psi = 1, 1/2, 0 for >, =, <."""
    g = goods[:, None]
    b = bads[None, :]
    kernel = (g > b).astype(float) + 0.5 * (g == b)
    return kernel.mean(axis=1), kernel.mean(axis=0)


def fast_components(goods, bads):
    """Sun & Xu (2014): V10 = (midrank in all - midrank among goods) / n_bads, V01 likewise."""
    m, n = len(goods), len(bads)
    allv = np.concatenate([goods, bads])
    tz = stats.rankdata(allv)
    tx = stats.rankdata(goods)
    ty = stats.rankdata(bads)
    v10 = (tz[:m] - tx) / n
    v01 = 1 - (tz[m:] - ty) / m
    return v10, v01


def delong(goods, bads):
    v10, v01 = structural_components(goods, bads)
    f10, f01 = fast_components(goods, bads)
    assert np.allclose(v10, f10, atol=1e-12) and np.allclose(v01, f01, atol=1e-12), 'fast DeLong disagrees with the definition'
    auc = float(v10.mean())
    m, n = len(goods), len(bads)
    var = float(np.var(v10, ddof=1) / m + np.var(v01, ddof=1) / n) if m >= 2 and n >= 2 else None
    return auc, var, v10, v01


def score_stats(rows, col, direction):
    raw_all = [(r[col], r[5]) for r in rows]
    scored = [(s, o) for s, o in raw_all if s is not None]
    missing = {'good': 0, 'bad': 0, 'unknown': 0}
    for s, o in raw_all:
        if s is None:
            missing['good' if o == 0 else 'bad' if o == 1 else 'unknown'] += 1
    known = [(s, o) for s, o in scored if o is not None]
    goods_raw = np.array([s for s, o in known if o == 0], dtype=float)
    bads_raw = np.array([s for s, o in known if o == 1], dtype=float)
    out = {
        'n_good': len(goods_raw), 'n_bad': len(bads_raw), 'n_unknown': len(scored) - len(known),
        'missing': missing, 'distinct': len(set(s for s, _ in scored)),
    }
    # AUC: sklearn, with good = positive class and the oriented score (higher = better).
    if len(goods_raw) and len(bads_raw):
        y = np.array([1 if o == 0 else 0 for _, o in known])
        x = oriented([s for s, _ in known], direction)
        out['auc'] = float(roc_auc_score(y, x))
        auc, var, _, _ = delong(oriented(goods_raw, direction), oriented(bads_raw, direction))
        assert abs(auc - out['auc']) < 1e-12
        out['delong_var'] = var
        out['gini'] = 2 * out['auc'] - 1
        if var is not None:
            se = math.sqrt(var)
            out['auc_ci'] = [max(0.0, out['auc'] - Z95 * se), min(1.0, out['auc'] + Z95 * se)]
        else:
            out['auc_ci'] = None
        ks = stats.ks_2samp(bads_raw, goods_raw)
        out['ks'] = float(ks.statistic)
        # The smallest score where the gap is largest, found in whole numbers; scipy's own location must reach D.
        values = np.unique(np.concatenate([goods_raw, bads_raw]))
        cb = np.searchsorted(np.sort(bads_raw), values, side='right')
        cg = np.searchsorted(np.sort(goods_raw), values, side='right')
        gap = np.abs(cb * len(goods_raw) - cg * len(bads_raw))
        i = int(np.argmax(gap))
        out['ks_at'] = float(values[i])
        out['ks_bad_cdf'] = float(cb[i] / len(bads_raw))
        out['ks_good_cdf'] = float(cg[i] / len(goods_raw))
        assert abs(gap[i] / (len(goods_raw) * len(bads_raw)) - out['ks']) < 1e-12
        j = int(np.searchsorted(values, ks.statistic_location))
        assert gap[j] == gap[i], 'scipy peaks where the gap is not largest'
    else:
        out.update({'auc': None, 'gini': None, 'delong_var': None, 'auc_ci': None, 'ks': None, 'ks_at': None})
        if len(goods_raw) + len(bads_raw) > 0:
            try:
                roc_auc_score([1 if o == 0 else 0 for _, o in known], [s for s, _ in known])
                raise AssertionError('sklearn computed an AUC from one class')
            except ValueError:
                pass
    # Deciles over every scored key (outcome known or not).
    allv = np.sort(np.array([s for s, _ in scored], dtype=float))
    N = len(allv)
    edges = []
    if N:
        q = np.quantile(allv, [k / 10 for k in range(1, 10)], method='inverted_cdf')
        exact = [allv[-(-k * N // 10) - 1] for k in range(1, 10)]
        assert np.array_equal(q, exact), f'numpy inverted_cdf {q} vs exact {exact}'
        for e in q:
            if not edges or e > edges[-1]:
                edges.append(float(e))
    bins = np.searchsorted(np.array(edges), np.array([s for s, _ in scored], dtype=float), side='left')
    nb = len(edges) + 1
    keys = np.bincount(bins, minlength=nb)
    good = np.bincount(bins[[o == 0 for _, o in scored]], minlength=nb) if N else np.zeros(nb, int)
    bad = np.bincount(bins[[o == 1 for _, o in scored]], minlength=nb) if N else np.zeros(nb, int)
    keep = [i for i in range(nb) if keys[i] > 0]
    if direction == 'lower_is_better':
        keep = keep[::-1]
    G, B = int(good.sum()), int(bad.sum())
    dec = []
    ck = cb_ = ckn = 0
    for i in keep:
        vals = [s for (s, _), bi in zip(scored, bins) if bi == i]
        ck += int(keys[i]); cb_ += int(bad[i]); ckn += int(good[i] + bad[i])
        dec.append({
            'min': float(min(vals)), 'max': float(max(vals)), 'keys': int(keys[i]), 'good': int(good[i]), 'bad': int(bad[i]),
            'bad_rate': float(bad[i] / (good[i] + bad[i])) if good[i] + bad[i] else None,
            'woe': float(math.log(max(good[i] / G, EPS) / max(bad[i] / B, EPS))) if G and B else None,
            'cum_keys_share': ck / N, 'cum_bad_share': cb_ / B if B else None, 'cum_bad_rate': cb_ / ckn if ckn else None,
        })
    out['decile_edges'] = edges
    out['deciles'] = dec
    if G and B:
        gs = np.maximum(np.array([good[i] for i in keep]) / G, EPS)
        bs = np.maximum(np.array([bad[i] for i in keep]) / B, EPS)
        out['iv'] = float(np.sum((gs - bs) * np.log(gs / bs)))
    else:
        out['iv'] = None
    # Trade-off: approve the best ceil(p*N) keys, ties at the cut-off kept together.
    o = oriented([s for s, _ in scored], direction)
    order = np.sort(o)[::-1]
    tr = []
    for pct in range(5, 101, 5):
        if not N:
            break
        need = -(-pct * N // 100)
        cut = order[need - 1]
        sel = o >= cut
        outs = [oc for (_, oc), s in zip(scored, sel) if s]
        g_, b_ = outs.count(0), outs.count(1)
        tr.append({'target': pct / 100, 'cutoff': float(cut if direction == 'higher_is_better' else -cut),
                   'approved': int(sel.sum()), 'good': g_, 'bad': b_, 'bad_rate': b_ / (g_ + b_) if g_ + b_ else None})
    out['tradeoff'] = tr
    out['wilson_bad_rate'] = wilson(len(bads_raw), len(goods_raw) + len(bads_raw))
    return out


def paired(rows, ca, da, cb, db):
    common = [r for r in rows if r[ca] is not None and r[cb] is not None and r[5] is not None]
    goods = [r for r in common if r[5] == 0]
    bads = [r for r in common if r[5] == 1]
    if not goods or not bads:
        return None
    ga, ba = oriented([r[ca] for r in goods], da), oriented([r[ca] for r in bads], da)
    gb, bb = oriented([r[cb] for r in goods], db), oriented([r[cb] for r in bads], db)
    auc_a, var_a, v10a, v01a = delong(ga, ba)
    auc_b, var_b, v10b, v01b = delong(gb, bb)
    m, n = len(goods), len(bads)
    s10 = np.cov(np.vstack([v10a, v10b]), ddof=1)
    s01 = np.cov(np.vstack([v01a, v01b]), ddof=1)
    cov = s10[0, 1] / m + s01[0, 1] / n
    var = var_a + var_b - 2 * cov
    se = math.sqrt(var)
    z = (auc_b - auc_a) / se
    return {
        'n_good': m, 'n_bad': n, 'auc_a': auc_a, 'auc_b': auc_b, 'difference': auc_b - auc_a, 'se': se,
        'ci': [auc_b - auc_a - Z95 * se, auc_b - auc_a + Z95 * se], 'z': z, 'p_value': float(2 * stats.norm.sf(abs(z))),
    }


def psi_fixture(rows):
    """PSI of score A, period 1 against period 0, over period 0's deciles plus a missing bin."""
    base = np.sort(np.array([r[1] for r in rows if r[4] == 0 and r[1] is not None], dtype=float))
    n = len(base)
    edges = []
    for k in range(1, 10):
        e = float(base[-(-k * n // 10) - 1])
        if not edges or e > edges[-1]:
            edges.append(e)
    def counts(period):
        c = np.zeros(len(edges) + 2, dtype=int)
        for r in rows:
            if r[4] != period:
                continue
            c[len(edges) + 1 if r[1] is None else int(np.searchsorted(edges, r[1], side='left'))] += 1
        return c
    a, b = counts(0), counts(1)
    sa = np.maximum(a / a.sum(), EPS)
    sb = np.maximum(b / b.sum(), EPS)
    return {'edges': edges, 'a': a.tolist(), 'b': b.tolist(), 'psi': float(np.sum((sb - sa) * np.log(sb / sa)))}


def main():
    rows = synthesise()
    datasets = {'all': rows}
    for seg in ('mixed', 'all_good', 'all_bad'):
        datasets[seg] = [r for r in rows if r[0] == seg]
    expected = {name: {s: score_stats(data, col, d) for s, (col, d) in SCORES.items()} for name, data in datasets.items()}
    pairs = {
        'b_vs_a': {name: paired(data, 1, 'higher_is_better', 2, 'higher_is_better') for name, data in datasets.items()},
        'grade_vs_a': {name: paired(data, 1, 'higher_is_better', 3, 'lower_is_better') for name, data in datasets.items()},
    }
    doc = {
        'generated_by': 'packages/backtest/scripts/backtest-fixtures.py',
        'versions': {'python': sys.version.split()[0], 'numpy': np.__version__, 'scipy': scipy.__version__, 'sklearn': sklearn.__version__},
        'columns': ['segment', 'a', 'b', 'grade', 'period', 'outcome'],
        'directions': {s: d for s, (_, d) in SCORES.items()},
        'rows': rows,
        'expected': expected,
        'paired': pairs,
        'psi': psi_fixture(rows),
        'chi2_sf': [[x, df, float(stats.chi2.sf(x, df))] for x, df in
                    [(0.5, 1), (3.841458820694124, 1), (10, 3), (2, 10), (25, 10), (60, 10), (0.01, 2), (150, 40), (400, 9), (7.5, 7)]],
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump(doc, f, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {os.path.relpath(OUT)}: {len(rows)} rows')


if __name__ == '__main__':
    main()
