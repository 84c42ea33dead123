/**
 * Design-based estimators of a stratified simple random sample without replacement (design.ts), with their
 * standard errors by linearisation (variance.ts) and 95% intervals estimate ± z·SE (the normal quantile, as R's
 * confint() on svymean: docs/decisions/backtest-intervals.md):
 *
 *   total   Ŷ = Σ w_i·y_i                          z_i = w_i·y_i                      (R: svytotal)
 *   ratio   R̂ = Σ w_i·y_i / Σ w_i·x_i              z_i = w_i·(y_i − R̂·x_i) / X̂       (R: svyratio)
 *   mean    the ratio of y to 1 over the domain    (R: svymean, on a subset: a domain mean)
 *
 * A difference of two means on the same units is the mean of the per-unit difference (its variance holds the
 * covariance of the sides); a share of a domain is a ratio (bads among the approved / approved with an outcome).
 */
import { CENSUS_TOLERANCE, fpcFactor, stratumWeights, type Design, type LonelyPsu } from './design.js';
import { Z95, type Interval } from '../stats.js';
import { stratifiedVariance } from './variance.js';

export interface Estimate {
  readonly estimate: number;
  /** Standard error; null when it cannot be estimated (see LonelyPsu 'average' with no stratum to average). */
  readonly se: number | null;
  /** estimate ± Z95·se, within `bounds` when given; null without se, or when the sample shows no variation. */
  readonly ci: Interval | null;
  /** Why there is no interval when there is a standard error (NO_VARIATION). */
  readonly note?: string;
}

/**
 * A standard error of 0 from a sample that did not take every row: every sampled unit had the same value (no
 * swap-in among the sampled keys, say). The population may well hold other values, so [x, x] would claim a
 * certainty the sample does not have: no interval is given.
 */
export const NO_VARIATION =
  'every sampled key has the same value: the sample gives no interval (the population may differ)';

/** Per-unit values, one per unit of the design, in the design's unit order. */
export type Values = Float64Array;

function weightsOf(d: Design): Float64Array {
  const ws = stratumWeights(d.strata);
  return Float64Array.from(d.unitStratum, (h) => ws[h]);
}

/** The interval of an estimate, clipped to [lower, upper] when given (a rate lies in [0, 1], a count ≥ 0). */
export function interval(estimate: number, se: number | null, bounds?: Interval): Interval | null {
  if (se === null || !Number.isFinite(se)) return null;
  let lower = estimate - Z95 * se;
  let upper = estimate + Z95 * se;
  if (bounds) {
    lower = Math.max(bounds.lower, lower);
    upper = Math.min(bounds.upper, upper);
  }
  return { lower, upper };
}

/** A standard error that is 0 but for rounding. */
export function noVariation(estimate: number, se: number): boolean {
  return se <= 1e-12 * Math.max(1, Math.abs(estimate));
}

/** Whether every stratum with a unit was sampled whole: a standard error of 0 is then the truth. */
export function census(d: Design): boolean {
  for (const h of d.unitStratum) if (fpcFactor(d.strata[h]) >= CENSUS_TOLERANCE) return false;
  return true;
}

function withSe(d: Design, estimate: number, variance: number | null, bounds?: Interval): Estimate {
  const se = variance === null ? null : Math.sqrt(Math.max(0, variance));
  if (se !== null && noVariation(estimate, se) && !census(d)) return { estimate, se, ci: null, note: NO_VARIATION };
  return { estimate, se, ci: interval(estimate, se, bounds) };
}

function check(d: Design, v: Values, what: string): void {
  if (v.length !== d.unitStratum.length)
    throw new RangeError(`Expected ${d.unitStratum.length} values of ${what}, got ${v.length}`);
}

/** Ŷ = Σ w·y. */
export function total(d: Design, y: Values, lonely: LonelyPsu, bounds?: Interval): Estimate {
  check(d, y, 'y');
  const w = weightsOf(d);
  const z = new Float64Array(y.length);
  let t = 0;
  for (let i = 0; i < y.length; i += 1) {
    z[i] = w[i] * y[i];
    t += z[i];
  }
  return withSe(d, t, stratifiedVariance(d, z, lonely), bounds);
}

/** R̂ = Σ w·y / Σ w·x; null when Σ w·x is 0 (an empty set has no rate). */
export function ratio(d: Design, y: Values, x: Values, lonely: LonelyPsu, bounds?: Interval): Estimate | null {
  check(d, y, 'y');
  check(d, x, 'x');
  const w = weightsOf(d);
  let ty = 0;
  let tx = 0;
  for (let i = 0; i < y.length; i += 1) {
    ty += w[i] * y[i];
    tx += w[i] * x[i];
  }
  if (tx === 0) return null;
  const r = ty / tx;
  const z = new Float64Array(y.length);
  for (let i = 0; i < y.length; i += 1) z[i] = (w[i] * (y[i] - r * x[i])) / tx;
  return withSe(d, r, stratifiedVariance(d, z, lonely), bounds);
}

/** The mean of y over the design's units (a domain mean when the units are a domain's); null without units. */
export function mean(d: Design, y: Values, lonely: LonelyPsu, bounds?: Interval): Estimate | null {
  return ratio(d, y, new Float64Array(y.length).fill(1), lonely, bounds);
}

/** Degrees of freedom of the design: its units less the strata they are in (R: degf() of the design or subset). */
export function degreesOfFreedom(d: Design): number {
  const seen = new Uint8Array(d.strata.length);
  let strata = 0;
  for (let i = 0; i < d.unitStratum.length; i += 1) {
    const h = d.unitStratum[i];
    if (!seen[h]) {
      seen[h] = 1;
      strata += 1;
    }
  }
  return d.unitStratum.length - strata;
}
