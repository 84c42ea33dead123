/**
 * A one-stage stratified simple random sample without replacement, as `bre-batch run --sample` draws it: stratum
 * h holds N_h rows of the population, n_h of them were sampled, each with the design weight N_h / n_h.
 *
 * The units an estimator sees are the sampled units of a *domain* (the keys `compare` could compare); the other
 * n_h − r_h sampled units of a stratum (rows that failed, that one run lacks) are outside the domain: they add
 * nothing to a total but still count in n_h, so the variance treats them as zeros. That is how R's survey
 * package estimates on `subset(design, ...)` (onestrat() pads a stratum with zero rows up to its n_h), and it
 * makes a domain estimate an estimate of exactly what the full run's comparison reports, with no assumption on
 * why a row failed. Strata are given once; units refer to them by index.
 */

export interface Stratum {
  readonly name: string;
  /** N_h: rows of the population in the stratum. */
  readonly population: number;
  /** n_h: rows sampled from it (the design's, failed rows included). */
  readonly sampled: number;
}

/**
 * What to do with a stratum that has one sampled unit of several (n_h = 1 < N_h), whose variance cannot be
 * estimated: R's options(survey.lonely.psu). `average` (bre-batch's choice): such strata get the average variance
 * of the others (the total is scaled by strata / strata with a variance); `adjust`: the unit's deviation is taken
 * from 0 instead of its stratum's mean (conservative); `remove`: it adds no variance. A stratum sampled whole
 * (n_h = N_h, the finite population correction is 0) has no variance and is never lonely.
 */
export type LonelyPsu = 'average' | 'adjust' | 'remove';

export const DEFAULT_LONELY_PSU: LonelyPsu = 'average';

/** The sampled units of a domain: the stratum index of each (into `strata`). */
export interface Design {
  readonly strata: readonly Stratum[];
  /** Per unit: index of its stratum. */
  readonly unitStratum: Int32Array;
}

/** Why a design cannot be used: the message says what and where. */
export class DesignError extends Error {}

/**
 * Checks a design: N_h ≥ n_h ≥ 0 whole numbers, each unit's stratum exists, and no stratum holds more units than
 * it sampled. Returns the design.
 */
export function checkDesign(d: Design): Design {
  const counts = new Int32Array(d.strata.length);
  for (const s of d.strata) {
    if (!Number.isInteger(s.population) || !Number.isInteger(s.sampled) || s.sampled < 0 || s.population < s.sampled) {
      throw new DesignError(
        `Expected stratum '${s.name}' to have whole numbers population ≥ sample ≥ 0, got population ${s.population} and sample ${s.sampled}`,
      );
    }
    if (s.population === 0)
      throw new DesignError(`Expected stratum '${s.name}' to have a population of at least 1, got 0`);
  }
  for (let i = 0; i < d.unitStratum.length; i += 1) {
    const h = d.unitStratum[i];
    if (h < 0 || h >= d.strata.length)
      throw new DesignError(`Expected unit ${i} to be in one of the ${d.strata.length} strata, got stratum index ${h}`);
    counts[h] += 1;
  }
  counts.forEach((c, h) => {
    const s = d.strata[h];
    if (c > s.sampled)
      throw new DesignError(`Expected at most ${s.sampled} sampled units in stratum '${s.name}', got ${c}`);
  });
  return d;
}

/** Design weight N_h / n_h of each stratum (0 for a stratum with no sampled unit: it has none to weight). */
export function stratumWeights(strata: readonly Stratum[]): Float64Array {
  return Float64Array.from(strata, (s) => (s.sampled > 0 ? s.population / s.sampled : 0));
}

/** Sampling fraction's complement 1 − n_h/N_h, R's (fpc − nPSU)/fpc. */
export function fpcFactor(s: Stratum): number {
  return (s.population - s.sampled) / s.population;
}

/** R's test for a stratum sampled whole (onestrat: all(f < 1e-7)). */
export const CENSUS_TOLERANCE = 1e-7;

/** Units per stratum (r_h). */
export function unitsPerStratum(d: Design): Int32Array {
  const r = new Int32Array(d.strata.length);
  for (let i = 0; i < d.unitStratum.length; i += 1) r[d.unitStratum[i]] += 1;
  return r;
}

/** Σ N_h over the strata with at least one unit in the domain: the population the estimates speak for. */
export function coveredPopulation(d: Design): number {
  const r = unitsPerStratum(d);
  let n = 0;
  d.strata.forEach((s, h) => {
    if (r[h] > 0) n += s.population;
  });
  return n;
}
