/**
 * Kolmogorov–Smirnov separation of one score: the largest gap between the cumulative distributions of the bads'
 * and the goods' scores, KS = max over r of |F_bad(r) − F_good(r)| with F(r) = share of scores ≤ r, and the
 * score r where it peaks (the smallest such r when several tie). The same statistic as scipy.stats.ks_2samp's
 * two-sided D. The gap is compared in whole numbers (|cumBad·goods − cumGood·bads|), so the peak is exact.
 */
import type { ScoreTable } from './table.js';

export interface KsFigures {
  readonly ks: number;
  /** The score at which the gap peaks. */
  readonly at_score: number;
  /** Shares of the bads and of the goods scoring at most `at_score`. */
  readonly bad_cdf: number;
  readonly good_cdf: number;
}

/** On the raw (not oriented) table; null when there is no good or no bad. */
export function ksFigures(t: ScoreTable): KsFigures | null {
  const nG = t.nGood;
  const nB = t.nBad;
  if (nG === 0 || nB === 0) return null;
  let cumG = 0;
  let cumB = 0;
  let best = -1;
  let at = 0;
  let atG = 0;
  let atB = 0;
  for (let k = 0; k < t.values.length; k += 1) {
    cumG += t.good[k];
    cumB += t.bad[k];
    const gap = Math.abs(cumB * nG - cumG * nB);
    if (gap > best) {
      best = gap;
      at = t.values[k];
      atG = cumG;
      atB = cumB;
    }
  }
  return { ks: best / (nG * nB), at_score: at, bad_cdf: atB / nB, good_cdf: atG / nG };
}
