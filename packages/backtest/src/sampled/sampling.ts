/**
 * `compare` on sampled runs: whether the two runs are one sample (refused, SAMPLE_MISMATCH, when they are not, or
 * when only one is a sample: an unweighted comparison of a weighted sample is never given silently), the checks
 * of each run's rows against its design (SAMPLE_INVALID), the stratum of each compared key, and what compare.json
 * says about the design and the rows that could not be compared.
 *
 * Missing data: a sampled row that failed (in errors.ndjson with its stratum), that only one run has, or that an
 * unfinished run has not reached is a sampled unit outside the compared keys. The estimates are of the compared
 * population (what compare would report over a run of the whole input, whose failed rows are left out the same
 * way); they need no assumption about why rows failed, and the counts are shown beside them.
 */
import { join } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { errorLines, FILES } from '@bre-batch/formats';
import { DEFAULT_LONELY_PSU, stratumWeights, type LonelyPsu, type Stratum } from '../design/design.js';
import type { ResultLine, RunFolder } from '../folder.js';
import { designDifference, sampleBlockOf, strataOf, stratifiedBy, type SampleBlock } from './block.js';
import { SampledRun } from './run-keys.js';

/** A stratum of the design (N_h `population`, n_h `sample`), its weight and what became of its sampled rows. */
interface SampleStratumSummary extends Readonly<SampleBlock['strata'][number]> {
  /** N_h / n_h (null for a stratum with no sampled row). */
  readonly weight: number | null;
  /** Sampled keys compared; failed in A's / B's errors.ndjson; the rest were not compared for another reason. */
  readonly compared: number;
  readonly failed_a: number;
  readonly failed_b: number | null;
  readonly not_compared: number;
}

export interface SampleSummary {
  /** "estimated from a sample of 300 of 1,500": what the report says at the top and on each figure. */
  readonly notice: string;
  /** The design as manifest.json records it, each stratum with what became of its rows. */
  readonly design: Readonly<Omit<SampleBlock, 'strata'>> & { readonly strata: readonly SampleStratumSummary[] };
  /** How A and B were found to be one sample. */
  readonly same_sample: 'one run' | 'same design and keys' | 'same design; keys not compared (a run has not finished)';
  /** Sampled keys compared (the estimates' units) and not. */
  readonly compared: number;
  readonly not_compared: number;
  /** Sampled rows in each run's errors.ndjson (null for B when it is A). */
  readonly failed: { readonly a: number; readonly b: number | null };
  /** Sampled rows in neither results nor errors: the run has not finished (resume it). */
  readonly not_processed: { readonly a: number; readonly b: number | null };
  /** Error lines without a stratum: rows outside the sample (no key to sample by). */
  readonly outside_sample_errors: { readonly a: number; readonly b: number | null };
  /** Strata with no compared key: the estimates do not speak for their rows. */
  readonly uncovered: { readonly strata: number; readonly population: number; readonly names: readonly string[] };
  /** Strata with one sampled row of several: no variance of their own (see lonely_psu). */
  readonly lonely_strata: number;
  readonly lonely_psu: LonelyPsu;
  readonly replicates: number;
  readonly bootstrap_seed: string;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

export class Sampling {
  readonly strata: readonly Stratum[];
  readonly weights: Float64Array;
  readonly a: SampledRun;
  readonly b: SampledRun | null;
  readonly compared: Int32Array;
  readonly bootstrapSeed: string;

  private constructor(
    readonly block: SampleBlock,
    A: RunFolder,
    B: RunFolder | null,
    readonly replicates: number,
  ) {
    this.strata = strataOf(block);
    this.weights = stratumWeights(this.strata);
    this.a = new SampledRun(block, 'A', A.dir);
    this.b = B ? new SampledRun(block, 'B', B.dir) : null;
    this.compared = new Int32Array(this.strata.length);
    this.bootstrapSeed = `bre-batch compare bootstrap ${block.seed}`;
  }

  /**
   * The sample both runs are, or null when neither is one. Refuses (SAMPLE_MISMATCH) one sampled run against
   * one that is not, and two different designs.
   */
  static open(A: RunFolder, B: RunFolder, sameFolder: boolean, replicates: number): Sampling | null {
    const a = sampleBlockOf(A.manifestJson, A.dir);
    const b = sameFolder ? a : sampleBlockOf(B.manifestJson, B.dir);
    if (a === undefined && b === undefined) return null;
    if (a === undefined || b === undefined) {
      const [sampled, whole] = a ? ['A', 'B'] : ['B', 'A'];
      const block = (a ?? b) as SampleBlock;
      throw new BreError(
        'SAMPLE_MISMATCH',
        `Expected runs A and B to be the same sample, got run ${sampled} a sample (${fmt(block.sampled)} of ${fmt(block.population)} rows) and run ${whole} a run of every row: a sample's figures cannot be set against another population's; compare two runs of the same sample (same input, --sample/--sample-share, --stratify-by and --seed), or two full runs`,
        { field: 'sample' },
      );
    }
    if (!sameFolder) {
      const why = designDifference(a, b);
      if (why)
        throw new BreError(
          'SAMPLE_MISMATCH',
          `Expected runs A and B to be the same sample (same input, strata, sample sizes and --seed), got: ${why}`,
          { field: 'sample' },
        );
    }
    return new Sampling(a, A, sameFolder ? null : B, replicates);
  }

  /** The results-line hook of each run's first pass (`b` is not called when B is A). */
  resultLine(role: 'a' | 'b'): (line: ResultLine) => void {
    const run = role === 'a' ? this.a : this.b;
    return run
      ? (line) => {
          run.resultLine(line);
        }
      : () => {};
  }

  /** Reads the errors files, then checks each run's counts against its design and, for two runs, their keys. */
  async checkRuns(): Promise<void> {
    for (const run of [this.a, this.b]) {
      if (!run) continue;
      for await (const line of errorLines(join(run.dir, FILES.errors))) {
        if (!line) continue;
        const raw = line as unknown as { stratum?: unknown; weight?: unknown };
        run.errorLine({ row: line.row, key: line.key, stratum: raw.stratum, weight: raw.weight });
      }
      run.finish();
    }
    const b = this.b;
    if (b && this.a.unprocessed === 0 && b.unprocessed === 0 && this.a.fingerprint !== b.fingerprint) {
      throw new BreError(
        'SAMPLE_MISMATCH',
        `Expected runs A and B to hold the same sampled keys in the same strata, got different keys (A ${fmt(this.a.block.sampled)} rows in ${this.a.dir}, B in ${b.dir}, the same design): were they run on different inputs? Compare runs of one input with the same --sample, --stratify-by and --seed`,
        { field: 'sample' },
      );
    }
  }

  /** The stratum of a compared key (its A line's; B's must agree). */
  unitOf(a: { stratum?: unknown; key: string | null }, b: { stratum?: unknown }): number {
    const h = typeof a.stratum === 'string' ? this.a.index.get(a.stratum) : undefined;
    if (h === undefined || b.stratum !== a.stratum) {
      throw new BreError(
        'SAMPLE_MISMATCH',
        `Expected key ${JSON.stringify(a.key)} to be in the same stratum in runs A and B, got ${JSON.stringify(a.stratum)} and ${JSON.stringify(b.stratum)}`,
        { field: 'stratum' },
      );
    }
    this.compared[h] += 1;
    return h;
  }

  get lonelyStrata(): number {
    let n = 0;
    this.strata.forEach((s, h) => {
      if (this.compared[h] > 0 && s.sampled === 1 && s.population > 1) n += 1;
    });
    return n;
  }

  /** "estimated from a sample of 300 of 1,500". */
  get notice(): string {
    return `estimated from a sample of ${fmt(this.block.sampled)} of ${fmt(this.block.population)}`;
  }

  summary(): SampleSummary {
    const bl = this.block;
    const compared = this.compared.reduce((s, v) => s + v, 0);
    const uncovered = bl.strata.filter((_, h) => this.compared[h] === 0);
    const b = this.b;
    return {
      notice: this.notice,
      design: {
        ...bl,
        strata: bl.strata.map((s, h) => ({
          name: s.name,
          values: s.values,
          population: s.population,
          sample: s.sample,
          weight: s.sample > 0 ? s.population / s.sample : null,
          compared: this.compared[h],
          failed_a: this.a.failed[h],
          failed_b: b ? b.failed[h] : null,
          not_compared: s.sample - this.compared[h],
        })),
      },
      same_sample: !b
        ? 'one run'
        : this.a.unprocessed === 0 && b.unprocessed === 0
          ? 'same design and keys'
          : 'same design; keys not compared (a run has not finished)',
      compared,
      not_compared: bl.sampled - compared,
      failed: { a: this.a.failedRows, b: b ? b.failedRows : null },
      not_processed: { a: this.a.unprocessed, b: b ? b.unprocessed : null },
      outside_sample_errors: { a: this.a.outsideErrors, b: b ? b.outsideErrors : null },
      uncovered: {
        strata: uncovered.length,
        population: uncovered.reduce((s, x) => s + x.population, 0),
        names: uncovered.slice(0, 100).map((s) => s.name),
      },
      lonely_strata: this.lonelyStrata,
      lonely_psu: DEFAULT_LONELY_PSU,
      replicates: this.replicates,
      bootstrap_seed: this.bootstrapSeed,
    };
  }

  /** How the strata were formed, for people. */
  get stratifiedBy(): string {
    return stratifiedBy(this.block);
  }
}
