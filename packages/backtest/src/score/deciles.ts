/**
 * Decile table and information value of one score. Bins are fixed on the score's values over every scored key
 * (outcome known or not): cut points q_k = the smallest score with at least k/10 of the keys at or below it
 * (inverse empirical CDF, Hyndman–Fan type 1; numpy's 'inverted_cdf'), k = 1..9, equal cut points merged, bins
 * (q_{k−1}, q_k]. With ties a bin holds more or less than a tenth; a score with few distinct values has fewer
 * than ten bins. Rows are listed riskiest first (lowest scores first when higher is better).
 *
 * Information value: IV = Σ (g_i/G − b_i/B) · ln((g_i/G) / (b_i/B)) over the bins, g and b the goods and bads;
 * shares floored at 1e-4 so an empty bin stays finite (the PSI formula between the goods' and the bads'
 * distributions, stats.ts). Usual reading: < 0.02 not predictive, 0.02–0.1 weak, 0.1–0.3 medium, ≥ 0.3 strong.
 */
import { psi, PSI_EPSILON } from '../stats.js';
import type { Direction, ScoreTable } from './table.js';

export interface DecileRow {
  /** Lowest and highest score in the bin. */
  readonly min: number;
  readonly max: number;
  readonly keys: number;
  readonly good: number;
  readonly bad: number;
  readonly unknown: number;
  /** bad / (good + bad); null when no outcome is known in the bin. */
  readonly bad_rate: number | null;
  /** ln(good share / bad share), shares floored as for IV; null when there is no good or no bad at all. */
  readonly woe: number | null;
  /** Cumulative, riskiest bin first: share of the keys, share of all bads, bad rate of the known. */
  readonly cum_keys_share: number;
  readonly cum_bad_share: number | null;
  readonly cum_bad_rate: number | null;
}

export interface DecileFigures {
  /** Cut points q_1..q_9 after merging equal ones. */
  readonly edges: readonly number[];
  readonly rows: readonly DecileRow[];
  readonly iv: number | null;
}

interface Bin {
  min: number;
  max: number;
  good: number;
  bad: number;
  unknown: number;
}

/** On the raw table (ascending values). */
export function decileFigures(t: ScoreTable, direction: Direction): DecileFigures {
  const n = t.values.length;
  const total = t.nGood + t.nBad + t.nUnknown;
  const edges: number[] = [];
  let cum = 0;
  let k = 1;
  for (let i = 0; i < n && k <= 9; i += 1) {
    cum += t.good[i] + t.bad[i] + t.unknown[i];
    // q_k is the first value whose cumulative count reaches ceil(k·N/10); one value may be several q_k.
    while (k <= 9 && cum >= Math.ceil((k * total) / 10)) {
      if (edges.length === 0 || edges[edges.length - 1] < t.values[i]) edges.push(t.values[i]);
      k += 1;
    }
  }
  const bins: Bin[] = [];
  let e = 0;
  let bin: Bin | null = null;
  for (let i = 0; i < n; i += 1) {
    const v = t.values[i];
    while (e < edges.length && v > edges[e]) {
      e += 1;
      bin = null;
    }
    if (!bin) {
      bin = { min: v, max: v, good: 0, bad: 0, unknown: 0 };
      bins.push(bin);
    }
    bin.max = v;
    bin.good += t.good[i];
    bin.bad += t.bad[i];
    bin.unknown += t.unknown[i];
  }
  if (direction === 'lower_is_better') bins.reverse();
  const G = t.nGood;
  const B = t.nBad;
  const iv = psi(
    bins.map((b) => b.good),
    bins.map((b) => b.bad),
  );
  let cKeys = 0;
  let cBad = 0;
  let cKnown = 0;
  const rows = bins.map((b): DecileRow => {
    const keys = b.good + b.bad + b.unknown;
    cKeys += keys;
    cBad += b.bad;
    cKnown += b.good + b.bad;
    return {
      min: b.min,
      max: b.max,
      keys,
      good: b.good,
      bad: b.bad,
      unknown: b.unknown,
      bad_rate: b.good + b.bad > 0 ? b.bad / (b.good + b.bad) : null,
      woe: G > 0 && B > 0 ? Math.log(Math.max(b.good / G, PSI_EPSILON) / Math.max(b.bad / B, PSI_EPSILON)) : null,
      cum_keys_share: total > 0 ? cKeys / total : 0,
      cum_bad_share: B > 0 ? cBad / B : null,
      cum_bad_rate: cKnown > 0 ? cBad / cKnown : null,
    };
  });
  return { edges, rows, iv };
}

export type IvBand = 'not predictive' | 'weak' | 'medium' | 'strong';

export function ivBand(iv: number | null): IvBand | null {
  if (iv === null) return null;
  if (iv < 0.02) return 'not predictive';
  if (iv < 0.1) return 'weak';
  if (iv < 0.3) return 'medium';
  return 'strong';
}
