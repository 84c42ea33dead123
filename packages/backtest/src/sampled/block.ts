/**
 * The sample design a sampled run records in its manifest.json (`sample`; its one schema is `sampleDesignSchema`
 * in packages/formats/src/manifest.ts): the seed, how the strata were formed, and per stratum N_h (`population`) and
 * n_h (`sample`). Read strictly, and checked against itself here, so that a damaged design is refused with a
 * message (SAMPLE_INVALID) rather than estimated from.
 */
import { BreError } from '@bre-batch/core/errors';
import { sampleDesignSchema, type ManifestSample } from '@bre-batch/formats';
import type { Stratum } from '../design/design.js';

export type SampleBlock = ManifestSample;

/**
 * The `sample` object of a run's manifest (`undefined` for a run that is not a sample). Refuses (SAMPLE_INVALID)
 * a block that is not the format, or whose numbers disagree with themselves.
 */
export function sampleBlockOf(
  manifest: Readonly<Record<string, unknown>> | null,
  dir: string,
): SampleBlock | undefined {
  const raw = manifest?.sample;
  if (raw === undefined || raw === null) return undefined;
  const parsed = sampleDesignSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BreError(
      'SAMPLE_INVALID',
      `Expected the sample design in ${dir}/manifest.json to be readable, got a problem at sample.${issue.path.join('.')}: ${issue.message}`,
      { field: 'sample' },
    );
  }
  const b = parsed.data;
  const names = new Set<string>();
  let population = 0;
  let sampled = 0;
  for (const s of b.strata) {
    if (names.has(s.name))
      throw new BreError(
        'SAMPLE_INVALID',
        `Expected each stratum of the sample in ${dir}/manifest.json to have its own name, got '${s.name}' twice`,
        { field: 'sample' },
      );
    names.add(s.name);
    if (s.sample > s.population)
      throw new BreError(
        'SAMPLE_INVALID',
        `Expected stratum '${s.name}' in ${dir}/manifest.json to sample at most its population (${s.population}), got ${s.sample}`,
        { field: 'sample' },
      );
    population += s.population;
    sampled += s.sample;
  }
  if (population !== b.population || sampled !== b.sampled) {
    throw new BreError(
      'SAMPLE_INVALID',
      `Expected the strata in ${dir}/manifest.json to add up to its population ${b.population} and sample ${b.sampled}, got ${population} and ${sampled}`,
      { field: 'sample' },
    );
  }
  return b;
}

/** The strata as the estimators take them. */
export function strataOf(b: SampleBlock): Stratum[] {
  return b.strata.map((s) => ({ name: s.name, population: s.population, sampled: s.sample }));
}

/** "2024-07 (month), hist_decision": how the strata were formed, for people. */
export function stratifiedBy(b: SampleBlock): string {
  return b.stratify_by.map((s) => (s.group ? `${s.column} (${s.group})` : s.column)).join(', ');
}

/**
 * Why two designs are not the same sample, or null when they are: the seed, the stratification, the allocation
 * and every stratum's N_h and n_h must agree (the keys are checked against each other separately).
 */
export function designDifference(a: SampleBlock, b: SampleBlock): string | null {
  if (a.seed !== b.seed) return `the seeds differ (A '${a.seed}', B '${b.seed}')`;
  const byA = stratifiedBy(a);
  const byB = stratifiedBy(b);
  if (byA !== byB) return `the strata are formed differently (A by ${byA || 'nothing'}, B by ${byB || 'nothing'})`;
  if (a.allocation !== b.allocation || a.size !== b.size || a.share !== b.share) {
    const desc = (x: SampleBlock): string =>
      `${x.allocation}, ${x.size !== null ? `size ${x.size}` : `share ${x.share}`}`;
    return `the sample sizes were asked differently (A ${desc(a)}; B ${desc(b)})`;
  }
  if (a.population !== b.population)
    return `the populations differ (A ${a.population} rows, B ${b.population}): the inputs are not the same`;
  const inB = new Map(b.strata.map((s) => [s.name, s]));
  for (const s of a.strata) {
    const t = inB.get(s.name);
    if (!t) return `stratum '${s.name}' of A is not in B`;
    if (t.population !== s.population || t.sample !== s.sample) {
      return `stratum '${s.name}' differs (A: ${s.sample} of ${s.population}, B: ${t.sample} of ${t.population})`;
    }
  }
  const extra = b.strata.length - a.strata.length;
  if (extra !== 0) return `B has ${extra} ${extra === 1 ? 'stratum' : 'strata'} that A has not`;
  return null;
}
