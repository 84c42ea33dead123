/**
 * Standard errors of statistics that are not smooth totals (AUC, KS) under the stratified design: the rescaling
 * bootstrap of Rao & Wu (1988) with m_h = n_h − 1 (Rao, Wu & Yue 1992), which carries the finite population
 * correction (why this one: docs/decisions/backtest-intervals.md). In replicate b every unit's weight becomes
 *
 *   w*_i = w_i · (1 − λ_h + λ_h · (n_h / m_h) · c_i),   λ_h = √(1 − f_h)
 *
 * (c_i: the times unit i was drawn; a stratum sampled whole, or a lonely one, keeps its weights). The SE is the
 * standard deviation of the replicates (divisor B − 1); the interval is estimate ± 1.96·SE.
 */
import { CENSUS_TOLERANCE, fpcFactor, stratumWeights, type Design } from './design.js';
import { Random } from './rng.js';
import { lonelyScale } from './variance.js';

export interface BootstrapOptions {
  readonly replicates: number;
  /** Text seed of the generator: the same seed gives the same replicates. */
  readonly seed: string;
}

/** Default replicates: the standard error's own Monte Carlo error is about 1/√(2B) of it, 2.2% at 1,000. */
export const DEFAULT_REPLICATES = 1000;

/**
 * Runs `statistic` on the full-sample weights and on each replicate's; returns the full-sample values and, per
 * statistic, its replicate values (NaN where the statistic is undefined in a replicate: no bad drawn, say).
 */
export function bootstrap(
  d: Design,
  o: BootstrapOptions,
  statistic: (weights: Float64Array) => readonly number[],
): { full: readonly number[]; replicates: Float64Array[] } {
  const H = d.strata.length;
  const ws = stratumWeights(d.strata);
  const members: number[][] = Array.from({ length: H }, () => []);
  for (let i = 0; i < d.unitStratum.length; i += 1) members[d.unitStratum[i]].push(i);
  const base = Float64Array.from(d.unitStratum, (h) => ws[h]);
  const full = statistic(base);
  const out = full.map(() => new Float64Array(o.replicates));
  const resampled = d.strata.map((s, h) => members[h].length > 0 && s.sampled >= 2 && fpcFactor(s) >= CENSUS_TOLERANCE);
  const rng = new Random(o.seed);
  const w = new Float64Array(base.length);
  const draws = new Int32Array(base.length);
  for (let b = 0; b < o.replicates; b += 1) {
    w.set(base);
    for (let h = 0; h < H; h += 1) {
      if (!resampled[h]) continue;
      const s = d.strata[h];
      const n = s.sampled;
      const m = n - 1;
      const list = members[h];
      for (const i of list) draws[i] = 0;
      // Positions list.length .. n − 1 are the stratum's units outside the domain: drawn, but weightless here.
      for (let k = 0; k < m; k += 1) {
        const j = rng.below(n);
        if (j < list.length) draws[list[j]] += 1;
      }
      const lambda = Math.sqrt(fpcFactor(s));
      for (const i of list) w[i] = ws[h] * (1 - lambda + lambda * (n / m) * draws[i]);
    }
    const values = statistic(w);
    for (let k = 0; k < values.length; k += 1) out[k][b] = values[k];
  }
  return { full, replicates: out };
}

/** Replicates that must be defined for a standard error (a statistic undefined in more is not estimable). */
const MIN_DEFINED_SHARE = 0.9;

/**
 * The bootstrap standard error: the standard deviation of the defined replicates, scaled for lonely strata as
 * the linearised variance is; null when fewer than MIN_DEFINED_SHARE of the replicates are defined.
 */
export function replicateSe(d: Design, replicates: Float64Array): number | null {
  let n = 0;
  let sum = 0;
  for (const v of replicates)
    if (Number.isFinite(v)) {
      n += 1;
      sum += v;
    }
  if (n < 2 || n < MIN_DEFINED_SHARE * replicates.length) return null;
  const mean = sum / n;
  let ss = 0;
  for (const v of replicates) if (Number.isFinite(v)) ss += (v - mean) * (v - mean);
  const factor = lonelyScale(d).factor;
  if (factor === null) return null;
  return Math.sqrt((ss / (n - 1)) * factor);
}
