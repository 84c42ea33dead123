/**
 * AUC (the probability that a good scores better than a bad, ties counted as one half), Gini = 2·AUC − 1, and
 * their variance by DeLong, DeLong & Clarke-Pearson (1988, Biometrics 44:837), for one score and for the paired
 * difference of two scores on the same keys.
 *
 * The computation is the fast one of Sun & Xu (2014, IEEE Signal Processing Letters 21:1389): the structural
 * components come from midranks instead of the m·n comparisons. Here the midranks are taken on the table of
 * distinct values (./table.ts), which is the same thing: for a good at value v, V10 = (bads below v + ½ bads
 * at v) / bads, and for a bad at v, V01 = (goods above v + ½ goods at v) / goods. O(distinct values) per score;
 * the paired covariance adds one pass over the keys (PairedDelong.add).
 */
import { Z95, type Interval } from '../stats.js';
import { twoSidedP } from './normal.js';
import { indexOfValue, type ScoreTable } from './table.js';

export interface AucFigures {
  readonly auc: number;
  readonly gini: number;
  /** DeLong standard error of the AUC; null with fewer than 2 goods or 2 bads. */
  readonly se: number | null;
  /** AUC ± 1.96·se, clipped to [0, 1]. */
  readonly ci: Interval | null;
  /** 2·ci − 1. */
  readonly gini_ci: Interval | null;
}

export interface Placements {
  /** V10 of a good at each value of the table. */
  readonly good: Float64Array;
  /** V01 of a bad at each value of the table. */
  readonly bad: Float64Array;
  readonly auc: number;
  /** Σ over goods of (V10 − AUC)², and over bads of (V01 − AUC)². */
  readonly ssGood: number;
  readonly ssBad: number;
}

/** Structural components of an oriented table (higher = better); null when there is no good or no bad. */
export function placements(t: ScoreTable): Placements | null {
  const nG = t.nGood;
  const nB = t.nBad;
  if (nG === 0 || nB === 0) return null;
  const n = t.values.length;
  const good = new Float64Array(n);
  const bad = new Float64Array(n);
  let badsBelow = 0;
  for (let k = 0; k < n; k += 1) {
    good[k] = (badsBelow + 0.5 * t.bad[k]) / nB;
    badsBelow += t.bad[k];
  }
  let goodsAbove = 0;
  for (let k = n - 1; k >= 0; k -= 1) {
    bad[k] = (goodsAbove + 0.5 * t.good[k]) / nG;
    goodsAbove += t.good[k];
  }
  let s = 0;
  for (let k = 0; k < n; k += 1) s += t.good[k] * good[k];
  const auc = s / nG;
  let ssGood = 0;
  let ssBad = 0;
  for (let k = 0; k < n; k += 1) {
    ssGood += t.good[k] * (good[k] - auc) ** 2;
    ssBad += t.bad[k] * (bad[k] - auc) ** 2;
  }
  return { good, bad, auc, ssGood, ssBad };
}

/** DeLong variance of one AUC from its components: S10/m + S01/n; null when m or n is below 2. */
function delongVariance(p: Placements, nGood: number, nBad: number): number | null {
  if (nGood < 2 || nBad < 2) return null;
  return p.ssGood / (nGood - 1) / nGood + p.ssBad / (nBad - 1) / nBad;
}

function clip(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** AUC, Gini and the DeLong interval of an oriented table; null when there is no good or no bad. */
export function aucFigures(t: ScoreTable): AucFigures | null {
  const p = placements(t);
  if (!p) return null;
  const v = delongVariance(p, t.nGood, t.nBad);
  const se = v === null ? null : Math.sqrt(v);
  const ci = se === null ? null : { lower: clip(p.auc - Z95 * se, 0, 1), upper: clip(p.auc + Z95 * se, 0, 1) };
  return {
    auc: p.auc,
    gini: 2 * p.auc - 1,
    se,
    ci,
    gini_ci: ci ? { lower: 2 * ci.lower - 1, upper: 2 * ci.upper - 1 } : null,
  };
}

export interface PairedAucFigures {
  /** Keys with both scores and a known outcome (the population of the test). */
  readonly n_good: number;
  readonly n_bad: number;
  readonly auc_a: number;
  readonly auc_b: number;
  /** AUC_B − AUC_A (the Gini difference is twice this). */
  readonly difference: number;
  /** DeLong standard error of the difference, √(var A + var B − 2·cov). */
  readonly se: number | null;
  readonly ci: Interval | null;
  readonly z: number | null;
  /** Two-sided; null when the standard error is 0 (the two scores rank every key alike). */
  readonly p_value: number | null;
  /** A and B have the same value on every key of the test. */
  readonly identical: boolean;
}

/**
 * The paired DeLong test of B's AUC against A's on the same keys. Built from the two oriented tables of the
 * common population (keys with both scores and a known outcome); then every such key is added once with its
 * two oriented values, for the covariance of the structural components.
 */
export class PairedDelong {
  private readonly pa: Placements | null;
  private readonly pb: Placements | null;
  private crossGood = 0;
  private crossBad = 0;
  private goods = 0;
  private bads = 0;
  private same = true;

  constructor(
    private readonly ta: ScoreTable,
    private readonly tb: ScoreTable,
  ) {
    if (ta.nGood !== tb.nGood || ta.nBad !== tb.nBad) {
      throw new RangeError(
        `Expected the same keys in both tables, got ${ta.nGood}/${ta.nBad} and ${tb.nGood}/${tb.nBad} goods/bads`,
      );
    }
    this.pa = placements(ta);
    this.pb = placements(tb);
  }

  add(a: number, b: number, outcome: 0 | 1): void {
    if (a !== b) this.same = false;
    const pa = this.pa;
    const pb = this.pb;
    if (!pa || !pb) return;
    const i = indexOfValue(this.ta, a);
    const j = indexOfValue(this.tb, b);
    if (i < 0 || j < 0) throw new RangeError(`Expected a value of the tables, got ${a} / ${b}`);
    if (outcome === 0) {
      this.goods += 1;
      this.crossGood += (pa.good[i] - pa.auc) * (pb.good[j] - pb.auc);
    } else {
      this.bads += 1;
      this.crossBad += (pa.bad[i] - pa.auc) * (pb.bad[j] - pb.auc);
    }
  }

  result(): PairedAucFigures | null {
    const { pa, pb } = this;
    const nG = this.ta.nGood;
    const nB = this.ta.nBad;
    if (!pa || !pb) return null;
    if (this.goods !== nG || this.bads !== nB) {
      throw new RangeError(
        `Expected every key of the tables to be added once, got ${this.goods}/${nG} goods and ${this.bads}/${nB} bads`,
      );
    }
    const va = delongVariance(pa, nG, nB);
    const vb = delongVariance(pb, nG, nB);
    const diff = pb.auc - pa.auc;
    let se: number | null = null;
    if (va !== null && vb !== null) {
      const cov = this.crossGood / (nG - 1) / nG + this.crossBad / (nB - 1) / nB;
      se = Math.sqrt(Math.max(0, va + vb - 2 * cov));
    }
    // A standard error this small is rounding noise of identical rankings, not information.
    const usable = se !== null && se > 1e-12;
    const z = usable ? diff / (se as number) : null;
    return {
      n_good: nG,
      n_bad: nB,
      auc_a: pa.auc,
      auc_b: pb.auc,
      difference: diff,
      se,
      ci: se === null ? null : { lower: diff - Z95 * se, upper: diff + Z95 * se },
      z,
      p_value: z === null ? null : twoSidedP(z),
      identical: this.same,
    };
  }
}
