/**
 * AUC and KS of a score over a weighted sample: each unit stands for w_i applicants of the population, so the
 * statistics are those of the population's estimated distributions.
 *
 *   AUC = Σ_{good g, bad b} w_g·w_b·([s_g better than s_b] + ½[s_g = s_b]) / (Σ w_g · Σ w_b)
 *         (the weighted Mann–Whitney statistic: with whole-number weights, the AUC of the sample with every unit
 *         repeated w_i times)
 *   KS  = max over r of |F_bad(r) − F_good(r)|, F the weighted share scoring ≤ r
 *
 * The units are sorted once (prepareScore); each evaluation with another set of weights (a bootstrap replicate)
 * is one pass over them, O(units).
 */
import type { KsFigures } from '../score/ks.js';
import type { Direction } from '../score/table.js';

/** The scored units with a known outcome, in ascending order of raw score, grouped by distinct value. */
export interface PreparedScore {
  /** Unit indices (into the weights), ascending by score. */
  readonly order: Int32Array;
  /** 1 for a bad unit, 0 for a good one, in `order`. */
  readonly bad: Uint8Array;
  /** Start in `order` of each distinct value's group, then order.length. */
  readonly groups: Int32Array;
  /** The distinct values, ascending. */
  readonly values: Float64Array;
  readonly direction: Direction;
}

/**
 * Keeps the units with a finite score and an outcome of 0 (good) or 1 (bad); `outcome` holds −1 for unknown.
 */
export function prepareScore(
  score: Float64Array,
  outcome: Int8Array,
  direction: Direction,
  keep: (i: number) => boolean = () => true,
): PreparedScore {
  const idx: number[] = [];
  for (let i = 0; i < score.length; i += 1)
    if (Number.isFinite(score[i]) && (outcome[i] === 0 || outcome[i] === 1) && keep(i)) idx.push(i);
  idx.sort((x, y) => score[x] - score[y] || x - y);
  const order = Int32Array.from(idx);
  const bad = Uint8Array.from(idx, (i) => outcome[i]);
  const groups: number[] = [];
  const values: number[] = [];
  for (let k = 0; k < idx.length; k += 1) {
    if (k === 0 || score[idx[k]] !== score[idx[k - 1]]) {
      groups.push(k);
      values.push(score[idx[k]] === 0 ? 0 : score[idx[k]]);
    }
  }
  groups.push(idx.length);
  return { order, bad, groups: Int32Array.from(groups), values: Float64Array.from(values), direction };
}

/** Weighted AUC (P(a good scores better than a bad) + ½ P(tie)); NaN without good or bad weight. */
export function weightedAuc(p: PreparedScore, w: Float64Array): number {
  const G = p.groups.length - 1;
  let below = 0;
  let totalGood = 0;
  let totalBad = 0;
  let s = 0;
  for (let g = 0; g < G; g += 1) {
    let good = 0;
    let bad = 0;
    for (let k = p.groups[g]; k < p.groups[g + 1]; k += 1) {
      const wi = w[p.order[k]];
      if (p.bad[k]) bad += wi;
      else good += wi;
    }
    // Goods here beat the bads below (higher is better), tie with the bads here.
    s += good * (below + 0.5 * bad);
    below += bad;
    totalGood += good;
    totalBad += bad;
  }
  if (!(totalGood > 0) || !(totalBad > 0)) return Number.NaN;
  const higher = s / (totalGood * totalBad);
  // Lower is better: a good beats a bad when it scores lower: 1 − P(higher) − P(tie) + ½P(tie) = 1 − higher.
  return p.direction === 'higher_is_better' ? higher : 1 - higher;
}

/** Weighted KS, the figures of ../score/ks.ts (at the smallest raw score where the gap peaks); null without good or bad weight. */
export function weightedKs(p: PreparedScore, w: Float64Array): KsFigures | null {
  const G = p.groups.length - 1;
  let totalGood = 0;
  let totalBad = 0;
  for (let k = 0; k < p.order.length; k += 1) {
    if (p.bad[k]) totalBad += w[p.order[k]];
    else totalGood += w[p.order[k]];
  }
  if (!(totalGood > 0) || !(totalBad > 0)) return null;
  let cumGood = 0;
  let cumBad = 0;
  let best: KsFigures | null = null;
  for (let g = 0; g < G; g += 1) {
    for (let k = p.groups[g]; k < p.groups[g + 1]; k += 1) {
      if (p.bad[k]) cumBad += w[p.order[k]];
      else cumGood += w[p.order[k]];
    }
    const fb = cumBad / totalBad;
    const fg = cumGood / totalGood;
    const gap = Math.abs(fb - fg);
    // A gap equal up to rounding to an earlier one is the same peak: keep the smallest score.
    if (best === null || gap > best.ks + 1e-12) best = { ks: gap, at_score: p.values[g], bad_cdf: fb, good_cdf: fg };
  }
  return best;
}
