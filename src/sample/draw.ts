/**
 * Drawing a stratified sample from rows read twice (pure: the reads are src/pipeline/sample.ts's):
 *
 * 1. `StrataCount` sees every row's stratum values and counts N_h (memory: one entry per stratum);
 *    `design()` then allocates n_h (./allocation.ts) and gives the design as manifest.json records it.
 * 2. `SampleDraw` sees every row again and keeps, per stratum, the n_h rows of smallest hash
 *    (./selection.ts; memory: the sample). `chosen()` names them.
 *
 * Two reads, because n_h depends on the final N_h: a heap bounded by n_h cannot be kept while N_h is still
 * growing (the row it would need later may be one it dropped). Rows without a key cannot be ranked and belong
 * to no stratum: the run writes them to errors (SAMPLE_NO_KEY), as it writes rows it cannot read.
 */
import { BreError } from '@bre-batch/core/errors';
import { allocate } from './allocation.js';
import type { SampleDesign, StratumRecord } from '@bre-batch/formats/manifest';
import { describeSampleOptions, SAMPLE_METHOD, stratifyLabel, type SampleSpec } from './design.js';
import { BottomK, sampleHash } from './selection.js';
import { compareStrata, stratumKey, stratumName, type StratumValues } from './strata.js';

/** The design weight of a stratum's rows: N_h / n_h. */
export function weightOf(s: Pick<StratumRecord, 'population' | 'sample'>): number {
  return s.population / s.sample;
}

/** Pass 1: N_h per stratum. */
export class StrataCount {
  readonly #strata = new Map<string, { values: StratumValues; population: number }>();

  add(values: StratumValues): void {
    const key = stratumKey(values);
    const s = this.#strata.get(key);
    if (s) s.population += 1;
    else this.#strata.set(key, { values, population: 1 });
  }

  get strata(): number {
    return this.#strata.size;
  }

  /**
   * The design: strata in their order (./strata.ts), n_h allocated. USAGE when two strata would carry the
   * same name (a value holding `|`, or the text `(missing)`): rows carry the name, and it must say which.
   */
  design(spec: SampleSpec): SampleDesign {
    const list = [...this.#strata.values()].sort((a, b) => compareStrata(a.values, b.values));
    const named = new Map<string, StratumValues>();
    for (const s of list) {
      const name = stratumName(s.values);
      const other = named.get(name);
      if (other) {
        throw new BreError(
          'USAGE',
          `Expected --stratify-by values that name their strata apart, got ${JSON.stringify(other)} and ${JSON.stringify(s.values)}, both named '${name}' (a value holding '|', or the text '(missing)'): stratify by another column, or clean the values`,
          { field: 'stratify-by' },
        );
      }
      named.set(name, s.values);
    }
    const populations = list.map((s) => s.population);
    const samples = allocate(
      populations,
      spec.share !== null ? { share: spec.share } : { size: spec.size!, allocation: spec.allocation },
    );
    const strata = list.map(
      (s, i): StratumRecord => ({
        name: stratumName(s.values),
        values: [...s.values],
        population: s.population,
        sample: samples[i],
      }),
    );
    return {
      seed: spec.seed,
      method: SAMPLE_METHOD,
      stratify_by: spec.stratifyBy.map((c) => ({ column: c.column, group: c.group })),
      allocation: spec.allocation,
      size: spec.size,
      share: spec.share,
      population: populations.reduce((a, b) => a + b, 0),
      sampled: samples.reduce((a, b) => a + b, 0),
      strata,
    };
  }
}

/** Pass 2: per stratum, the n_h rows of smallest hash. */
export class SampleDraw {
  readonly #index = new Map<string, number>();
  readonly #heaps: BottomK[];

  constructor(readonly design: SampleDesign) {
    design.strata.forEach((s, i) => {
      this.#index.set(stratumKey(s.values), i);
    });
    this.#heaps = design.strata.map((s) => new BottomK(s.sample));
  }

  /**
   * One row of the same input as pass 1. Throws when its stratum was not counted: the input changed
   * between the two reads.
   */
  offer(values: StratumValues, key: string, row: number): void {
    const i = this.#index.get(stratumKey(values));
    if (i === undefined)
      throw new Error(
        `row ${row} falls in stratum ${stratumName(values)}, which the first read of the input did not see: the input changed while it was read`,
      );
    this.#heaps[i].offer({ hash: sampleHash(this.design.seed, key), row });
  }

  /** Row number -> its stratum's index in `design.strata`. */
  chosen(): Map<number, number> {
    const out = new Map<number, number>();
    this.#heaps.forEach((h, i) => {
      for (const r of h.sorted()) out.set(r.row, i);
    });
    return out;
  }
}

/** The options a recorded design was drawn with (its manifest was checked when read). */
export function specOf(d: SampleDesign): SampleSpec {
  return {
    seed: d.seed,
    stratifyBy: d.stratify_by,
    allocation: d.allocation,
    size: d.size,
    share: d.share,
  };
}

/**
 * How two folders' sample options differ, option by option (`--seed "a" then, "b" now`), in words for a message
 * that refuses to resume or merge; undefined when they are the same design (or neither is a sample). `as`
 * names the two (default `then` and `now`, for a resume). Strata that differ under the same options mean
 * another input: the input's fingerprint says so first.
 */
export function designDifference(
  before: SampleDesign | undefined,
  now: SampleDesign | undefined,
  as: readonly [string, string] = ['then', 'now'],
): string | undefined {
  if (!before && !now) return undefined;
  if (!before) return `it is not a sample ${as[0]}, a sample ${as[1]} (${describeSampleOptions(specOf(now!))})`;
  if (!now) return `it is a sample ${as[0]} (${describeSampleOptions(specOf(before))}), the whole input ${as[1]}`;
  const a = specOf(before);
  const b = specOf(now);
  const diffs: string[] = [];
  const differ = (what: string, x: string, y: string) => {
    if (x !== y) diffs.push(`${what} ${x} ${as[0]}, ${y} ${as[1]}`);
  };
  differ(
    'the size',
    a.size !== null ? `--sample ${a.size}` : `--sample-share ${a.share}`,
    b.size !== null ? `--sample ${b.size}` : `--sample-share ${b.share}`,
  );
  const strata = (x: SampleSpec) => (x.stratifyBy.length > 0 ? x.stratifyBy.map(stratifyLabel).join(',') : '(none)');
  differ('--stratify-by', strata(a), strata(b));
  differ('--seed', JSON.stringify(a.seed), JSON.stringify(b.seed));
  differ('--sample-allocation', a.allocation, b.allocation);
  if (diffs.length === 0 && JSON.stringify(before.strata) !== JSON.stringify(now.strata))
    diffs.push(`the same options drew other strata ${as[0]} and ${as[1]} (the input differs)`);
  return diffs.length === 0 ? undefined : `its sample was drawn with ${describeSampleOptions(a)}; ${diffs.join('; ')}`;
}
