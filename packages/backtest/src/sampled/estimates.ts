/**
 * The population estimates of one sampled comparison, from its compared keys (units.ts) and the design: what
 * `compare` would report over the whole input, each with a design-based 95% interval.
 *
 * The compared keys are a domain of the sample (a sampled row that failed, or that one run lacks, is a sampled
 * unit outside it: ../design/design.ts), so every rate is a domain ratio and every count a domain total:
 *
 *   approval rate of A       Σw·approved_A / Σw                      ratio (svymean on the domain)
 *   difference B − A         Σw·(approved_B − approved_A) / Σw        the mean of the per-key difference
 *   swap-in count, share     Σw·swap_in ; Σw·swap_in / Σw             total ; ratio
 *   bad rate of a set S      Σw·bad·S·known / Σw·S·known              ratio (svyratio)
 *   loan amount totals       Σw·amount·approved                        total
 *   AUC, Gini, KS            weighted Mann–Whitney, weighted ECDFs     rescaling bootstrap (../design/bootstrap.ts)
 *   PSI                      from the weighted shares of A's bins      no interval (see PsiEstimate)
 */
import { bootstrap, replicateSe } from '../design/bootstrap.js';
import {
  checkDesign,
  coveredPopulation,
  DEFAULT_LONELY_PSU,
  stratumWeights,
  type Design,
  type Stratum,
} from '../design/design.js';
import {
  census,
  degreesOfFreedom,
  interval,
  NO_VARIATION,
  noVariation,
  ratio,
  total,
  type Estimate,
} from '../design/estimators.js';
import { prepareScore, weightedAuc, weightedKs, type PreparedScore } from '../design/weighted-score.js';
import { binLabels, type FeatureFigures } from '../features.js';
import type { ScoreSpec } from '../score/spec.js';
import { psi, psiBand, type Interval } from '../stats.js';
import type { UnitTable, WeightedFeature } from './units.js';

const LONELY = DEFAULT_LONELY_PSU;
const SAME_SCORES = 'A and B give every compared key the same score: no difference to estimate';
const SHARE: Interval = { lower: 0, upper: 1 };
const SIGNED_SHARE: Interval = { lower: -1, upper: 1 };

export interface SwapEstimate {
  /** Estimated keys of the population in the class, and their share of the compared population. */
  readonly count: Estimate;
  readonly share: Estimate | null;
  /** Sampled keys in the class. */
  readonly sample: number;
}

export interface BadRateEstimate {
  /** Sampled keys in the set, with a known outcome, bad. */
  readonly sample: number;
  readonly sample_known: number;
  readonly sample_bad: number;
  /** Bads among the set's keys with a known outcome (a ratio); null when no sampled key of the set has one. */
  readonly bad_rate: Estimate | null;
  /** Share of the set's keys with a known outcome; null for an empty set. */
  readonly coverage: Estimate | null;
}

interface AmountEstimates {
  /** Σ of the amount over each side's approved keys with one; the change is B's total minus A's, paired. */
  readonly a_total: Estimate;
  readonly b_total: Estimate;
  readonly change: Estimate;
  /** New money (B's amounts on swap-ins) and money no longer lent (A's amounts on swap-outs). */
  readonly swap_in_total: Estimate;
  readonly swap_out_total: Estimate;
}

export interface ScorePowerEstimate {
  readonly field: string;
  /** Sampled keys with the score and a known outcome: goods and bads. */
  readonly sample_good: number;
  readonly sample_bad: number;
  readonly auc: Estimate | null;
  readonly gini: Estimate | null;
  readonly ks: (Estimate & { readonly at_score: number }) | null;
}

interface ScoreEstimates {
  readonly label: string;
  readonly direction: string;
  readonly a: ScorePowerEstimate;
  readonly b: ScorePowerEstimate;
  /** AUC of B minus AUC of A over the keys with both scores and a known outcome; null without goods or bads there. */
  readonly difference: (Estimate & { readonly sample: number }) | null;
}

/**
 * PSI of a feature between A and B from the estimated population shares of A's bins (`bins`: each bin's estimated
 * share, A and B). No interval: PSI is ≥ 0 and its sampling distribution is not normal near 0 (where it mostly
 * is: with no shift, a linearised SE is 0 and a bootstrap's intervals sit above the truth), so neither method
 * gives an honest interval there.
 */
type PsiEstimate = Pick<FeatureFigures, 'feature' | 'type' | 'psi' | 'band' | 'bins'>;

export interface SampleEstimates {
  readonly basis: 'population estimate';
  /** Σ N_h of the strata with at least one compared key: the rows the estimates speak for. */
  readonly population: number;
  /** Sampled keys compared (the units), and the design's degrees of freedom over them (units − strata). */
  readonly compared: number;
  readonly df: number;
  /** Estimated keys of the population that compare would compare in a run of the whole input. */
  readonly compared_population: Estimate;
  readonly approval: {
    readonly a: Estimate | null;
    readonly b: Estimate | null;
    readonly difference: Estimate | null;
  } | null;
  readonly swaps: {
    readonly swap_in: SwapEstimate;
    readonly swap_out: SwapEstimate;
    readonly both_approve: SwapEstimate;
    readonly both_reject: SwapEstimate;
    readonly net: Estimate;
  } | null;
  readonly bad_rates: Readonly<
    Record<
      'a_approved' | 'b_approved' | 'swap_in' | 'swap_out' | 'both_approve' | 'both_reject' | 'all',
      BadRateEstimate
    >
  > | null;
  readonly amounts: AmountEstimates | null;
  readonly scores: readonly ScoreEstimates[] | null;
  readonly psi: readonly PsiEstimate[];
}

export interface EstimateSetup {
  readonly strata: readonly Stratum[];
  readonly decisions: boolean;
  readonly withOutcome: boolean;
  readonly specs: readonly ScoreSpec[];
  readonly replicates: number;
  readonly seed: string;
}

function column(n: number, f: (i: number) => number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 1) out[i] = f(i);
  return out;
}

function count(v: Float64Array): number {
  let n = 0;
  for (const x of v) if (x !== 0) n += 1;
  return n;
}

export function sampleEstimates(u: UnitTable, features: readonly WeightedFeature[], s: EstimateSetup): SampleEstimates {
  const d: Design = checkDesign({ strata: s.strata, unitStratum: u.stratum });
  const n = u.stratum.length;
  const one = column(n, () => 1);
  const population = coveredPopulation(d);
  const counts: Interval = { lower: 0, upper: population };
  const base = {
    basis: 'population estimate' as const,
    population,
    compared: n,
    df: degreesOfFreedom(d),
    compared_population: total(d, one, LONELY, counts),
    psi: psiEstimates(features),
  };
  if (!s.decisions)
    return { ...base, approval: null, swaps: null, bad_rates: null, amounts: null, scores: scoreEstimates(d, u, s) };

  const A = column(n, (i) => u.approvedA[i]);
  const B = column(n, (i) => u.approvedB[i]);
  const sets = {
    swap_in: column(n, (i) => (!u.approvedA[i] && u.approvedB[i] ? 1 : 0)),
    swap_out: column(n, (i) => (u.approvedA[i] && !u.approvedB[i] ? 1 : 0)),
    both_approve: column(n, (i) => (u.approvedA[i] && u.approvedB[i] ? 1 : 0)),
    both_reject: column(n, (i) => (!u.approvedA[i] && !u.approvedB[i] ? 1 : 0)),
  };
  const swap = (v: Float64Array): SwapEstimate => ({
    count: total(d, v, LONELY, counts),
    share: ratio(d, v, one, LONELY, SHARE),
    sample: count(v),
  });
  const amount = (side: Float64Array, keep: (i: number) => boolean): Float64Array =>
    column(n, (i) => (keep(i) && Number.isFinite(side[i]) ? side[i] : 0));
  const amtA = amount(u.amountA, (i) => u.approvedA[i] === 1);
  const amtB = amount(u.amountB, (i) => u.approvedB[i] === 1);
  const money: Interval = { lower: 0, upper: Infinity };
  return {
    ...base,
    approval: {
      a: ratio(d, A, one, LONELY, SHARE),
      b: ratio(d, B, one, LONELY, SHARE),
      difference: ratio(
        d,
        column(n, (i) => B[i] - A[i]),
        one,
        LONELY,
        SIGNED_SHARE,
      ),
    },
    swaps: {
      swap_in: swap(sets.swap_in),
      swap_out: swap(sets.swap_out),
      both_approve: swap(sets.both_approve),
      both_reject: swap(sets.both_reject),
      net: total(
        d,
        column(n, (i) => sets.swap_in[i] - sets.swap_out[i]),
        LONELY,
        { lower: -population, upper: population },
      ),
    },
    bad_rates: s.withOutcome ? badRates(d, u, { a_approved: A, b_approved: B, ...sets, all: one }) : null,
    amounts: {
      a_total: total(d, amtA, LONELY, money),
      b_total: total(d, amtB, LONELY, money),
      change: total(
        d,
        column(n, (i) => amtB[i] - amtA[i]),
        LONELY,
      ),
      swap_in_total: total(
        d,
        amount(u.amountB, (i) => sets.swap_in[i] === 1),
        LONELY,
        money,
      ),
      swap_out_total: total(
        d,
        amount(u.amountA, (i) => sets.swap_out[i] === 1),
        LONELY,
        money,
      ),
    },
    scores: scoreEstimates(d, u, s),
  };
}

function badRates(d: Design, u: UnitTable, sets: Record<string, Float64Array>): SampleEstimates['bad_rates'] {
  const n = u.stratum.length;
  const known = column(n, (i) => (u.outcome[i] === -1 ? 0 : 1));
  const bad = column(n, (i) => (u.outcome[i] === 1 ? 1 : 0));
  const out: Record<string, BadRateEstimate> = {};
  for (const [name, set] of Object.entries(sets)) {
    const inKnown = column(n, (i) => set[i] * known[i]);
    const inBad = column(n, (i) => set[i] * bad[i]);
    out[name] = {
      sample: count(set),
      sample_known: count(inKnown),
      sample_bad: count(inBad),
      bad_rate: ratio(d, inBad, inKnown, LONELY, SHARE),
      coverage: ratio(d, inKnown, set, LONELY, SHARE),
    };
  }
  return out as SampleEstimates['bad_rates'];
}

function psiEstimates(features: readonly WeightedFeature[]): PsiEstimate[] {
  return features
    .map((f) => {
      const value = psi([...f.a], [...f.b]);
      const ta = f.a.reduce((s, v) => s + v, 0);
      const tb = f.b.reduce((s, v) => s + v, 0);
      return {
        feature: f.feature,
        type: f.bins.type,
        psi: value,
        band: psiBand(value),
        bins: binLabels(f.bins).map((label, i) => ({
          label,
          a: ta > 0 ? f.a[i] / ta : 0,
          b: tb > 0 ? f.b[i] / tb : 0,
        })),
      };
    })
    .sort((x, y) => (y.psi ?? -1) - (x.psi ?? -1) || (x.feature < y.feature ? -1 : 1));
}

function boundedEstimate(d: Design, value: number, se: number | null, bounds: Interval): Estimate {
  if (se !== null && noVariation(value, se) && !census(d)) return { estimate: value, se, ci: null, note: NO_VARIATION };
  return { estimate: value, se, ci: interval(value, se, bounds) };
}

/** AUC, Gini and KS of every --score on each side, and B − A, with bootstrap standard errors (one set of replicates for all). */
function scoreEstimates(d: Design, u: UnitTable, s: EstimateSetup): ScoreEstimates[] | null {
  if (s.specs.length === 0 || !s.withOutcome) return null;
  const prepared = s.specs.map((spec, i) => {
    const { a, b } = u.scores[i];
    const both = (k: number): boolean => Number.isFinite(a[k]) && Number.isFinite(b[k]);
    return {
      a: prepareScore(a, u.outcome, spec.direction),
      b: prepareScore(b, u.outcome, spec.direction),
      pairedA: prepareScore(a, u.outcome, spec.direction, both),
      pairedB: prepareScore(b, u.outcome, spec.direction, both),
    };
  });
  // Per score: AUC A, KS A, AUC B, KS B, paired AUC B − A.
  const { full, replicates } = bootstrap(d, { replicates: s.replicates, seed: s.seed }, (w) =>
    prepared.flatMap((p) => [
      weightedAuc(p.a, w),
      weightedKs(p.a, w)?.ks ?? Number.NaN,
      weightedAuc(p.b, w),
      weightedKs(p.b, w)?.ks ?? Number.NaN,
      weightedAuc(p.pairedB, w) - weightedAuc(p.pairedA, w),
    ]),
  );
  const ws = stratumWeights(d.strata);
  const weights = Float64Array.from(u.stratum, (h) => ws[h]);
  return s.specs.map((spec, i) => {
    const p = prepared[i];
    const at = 5 * i;
    const side = (field: string, q: PreparedScore, k: number): ScorePowerEstimate => {
      const auc = full[k];
      const aucSe = Number.isFinite(auc) ? replicateSe(d, replicates[k]) : null;
      const ks = weightedKs(q, weights);
      const ksSe = ks ? replicateSe(d, replicates[k + 1]) : null;
      const good = q.bad.reduce((c, v) => c + (v ? 0 : 1), 0);
      return {
        field,
        sample_good: good,
        sample_bad: q.bad.length - good,
        auc: Number.isFinite(auc) ? boundedEstimate(d, auc, aucSe, SHARE) : null,
        gini: Number.isFinite(auc)
          ? boundedEstimate(d, 2 * auc - 1, aucSe === null ? null : 2 * aucSe, SIGNED_SHARE)
          : null,
        ks: ks ? { ...boundedEstimate(d, ks.ks, ksSe, SHARE), at_score: ks.at_score } : null,
      };
    };
    const diff = full[at + 4];
    const { a, b } = u.scores[i];
    const identical = p.pairedA.order.every((k) => a[k] === b[k]);
    return {
      label: spec.label,
      direction: spec.direction,
      a: side(spec.fieldA, p.a, at),
      b: side(spec.fieldB, p.b, at + 2),
      difference: !Number.isFinite(diff)
        ? null
        : identical
          ? { estimate: 0, se: 0, ci: null, note: SAME_SCORES, sample: p.pairedA.order.length }
          : {
              ...boundedEstimate(d, diff, replicateSe(d, replicates[at + 4]), SIGNED_SHARE),
              sample: p.pairedA.order.length,
            },
    };
  });
}
