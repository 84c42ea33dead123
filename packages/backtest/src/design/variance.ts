/**
 * The variance of an estimator under a stratified simple random sample without replacement, from its
 * linearised values z_i (its influence: for a total z_i = w_i·y_i, for a ratio w_i·(y_i − R̂·x_i)/X̂):
 *
 *   V = Σ_h (1 − n_h/N_h) · n_h/(n_h − 1) · Σ_{i ∈ h} (z_i − z̄_h)²
 *
 * over the n_h sampled units of each stratum, those outside the domain taking z = 0. This is R survey's
 * svyrecvar() for `svydesign(ids = ~1, strata = ~h, fpc = ~N_h)` (onestage/onestrat, survey 4.1), including its
 * treatment of a stratum sampled whole (no variance), of one with a single sampled unit (see LonelyPsu) and of a
 * stratum with no unit in the domain (not part of the sum, nor of the strata counted for `average`).
 * packages/backtest/test/design-fixture.test.ts holds it to R's standard errors to 1e-9.
 */
import { CENSUS_TOLERANCE, fpcFactor, unitsPerStratum, type Design, type LonelyPsu } from './design.js';

/** The variance of Σ z (null when every stratum with units is lonely under `average`: nothing to average). */
export function stratifiedVariance(d: Design, z: Float64Array, lonely: LonelyPsu): number | null {
  const H = d.strata.length;
  const r = new Int32Array(H);
  const sum = new Float64Array(H);
  for (let i = 0; i < z.length; i += 1) {
    const h = d.unitStratum[i];
    r[h] += 1;
    sum[h] += z[i];
  }
  // Two passes (means first): the sum of squares about the mean keeps its digits when z is large (totals of
  // amounts), where Σz² − n·z̄² would cancel.
  const mean = new Float64Array(H);
  const centred = new Uint8Array(H);
  for (let h = 0; h < H; h += 1) {
    const n = d.strata[h].sampled;
    // onestrat(): a lonely unit under "adjust" is not centred (its deviation is from 0).
    centred[h] = lonely === 'adjust' && n === 1 ? 0 : 1;
    mean[h] = centred[h] && n > 0 ? sum[h] / n : 0;
  }
  const ss = new Float64Array(H);
  for (let i = 0; i < z.length; i += 1) {
    const h = d.unitStratum[i];
    const dev = z[i] - mean[h];
    ss[h] += dev * dev;
  }
  let total = 0;
  let present = 0;
  let withVariance = 0;
  for (let h = 0; h < H; h += 1) {
    if (r[h] === 0) continue;
    present += 1;
    const s = d.strata[h];
    const f = fpcFactor(s);
    if (f < CENSUS_TOLERANCE) {
      withVariance += 1;
      continue;
    }
    const n = s.sampled;
    if (n === 1 && lonely === 'average') continue;
    withVariance += 1;
    // The n_h − r_h units outside the domain are zeros: each adds (0 − z̄_h)².
    const padded = ss[h] + (n - r[h]) * mean[h] * mean[h];
    total += (n > 1 ? (f * n) / (n - 1) : f) * padded;
  }
  if (present === 0) return 0;
  if (withVariance === 0) return null;
  return (total * present) / withVariance;
}

/**
 * Strata whose variance `average` replaces (n_h = 1 < N_h with a unit in the domain), and the factor
 * strata / strata with a variance it scales by: the bootstrap applies the same factor to its variance.
 */
export function lonelyScale(d: Design): { lonely: number; present: number; factor: number | null } {
  const r = unitsPerStratum(d);
  let present = 0;
  let lonely = 0;
  d.strata.forEach((s, h) => {
    if (r[h] === 0) return;
    present += 1;
    if (s.sampled === 1 && fpcFactor(s) >= CENSUS_TOLERANCE) lonely += 1;
  });
  return { lonely, present, factor: present === lonely ? (present === 0 ? 1 : null) : present / (present - lonely) };
}
