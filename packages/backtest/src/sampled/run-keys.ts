/**
 * What a sampled run holds, checked against its design while its files are read: every results line and every
 * errors line of a sampled row names a stratum of the design and carries its weight N_h / n_h; no stratum has
 * more rows than it sampled. Counted per stratum (rows in results, rows in errors), and the (key, stratum) pairs
 * folded into an order-free digest, so that two runs can be shown to hold the same sampled keys without keeping
 * either's keys in memory.
 */
import { createHash } from 'node:crypto';
import { BreError } from '@bre-batch/core/errors';
import type { SampleBlock } from './block.js';

/** Relative tolerance of a line's weight against N_h / n_h (the weight is written as a decimal). */
const WEIGHT_TOLERANCE = 1e-6;
const MOD = 2 ** 48;

/** A row's sampling fields as results.ndjson and errors.ndjson carry them. */
export interface SampledLine {
  readonly row: number | null;
  readonly key: string | null;
  readonly stratum?: unknown;
  readonly weight?: unknown;
}

export class SampledRun {
  readonly index: ReadonlyMap<string, number>;
  /** Per stratum: rows in results.ndjson, rows in errors.ndjson. */
  readonly results: Int32Array;
  readonly failed: Int32Array;
  /** Error lines without a stratum: rows that are not in the sample (no key, unreadable), counted apart. */
  outsideErrors = 0;
  private count = 0;
  private sum1 = 0;
  private sum2 = 0;

  constructor(
    readonly block: SampleBlock,
    readonly role: 'A' | 'B',
    readonly dir: string,
  ) {
    this.index = new Map(block.strata.map((s, h) => [s.name, h]));
    this.results = new Int32Array(block.strata.length);
    this.failed = new Int32Array(block.strata.length);
  }

  /** A results line: refuses one without a stratum of the design or with another weight. */
  resultLine(line: SampledLine): number {
    const h = this.stratumOf(line, 'results.ndjson');
    if (h === null) {
      throw new BreError(
        'SAMPLE_INVALID',
        `Expected every line of ${this.dir}/results.ndjson (run ${this.role}, a sample) to carry its stratum and weight, got none on the line of row ${line.row ?? '?'} (key ${JSON.stringify(line.key)})`,
        { field: 'stratum' },
      );
    }
    this.results[h] += 1;
    this.digest(line.key, h);
    return h;
  }

  /** An errors line: a sampled row that failed (with its stratum), or a row outside the sample (without). */
  errorLine(line: SampledLine): void {
    const h = this.stratumOf(line, 'errors.ndjson');
    if (h === null) {
      this.outsideErrors += 1;
      return;
    }
    this.failed[h] += 1;
    this.digest(line.key, h);
  }

  /** After both files: refuses a stratum with more rows than it sampled. */
  finish(): void {
    this.block.strata.forEach((s, h) => {
      const rows = this.results[h] + this.failed[h];
      if (rows > s.sample) {
        throw new BreError(
          'SAMPLE_INVALID',
          `Expected at most ${s.sample} rows of stratum '${s.name}' in run ${this.role} (${this.dir}), as its manifest.json sampled, got ${rows} (${this.results[h]} in results, ${this.failed[h]} in errors)`,
          { field: 'sample' },
        );
      }
    });
  }

  /** Sampled rows neither in results nor in errors: the run has not finished. */
  get unprocessed(): number {
    let n = 0;
    this.block.strata.forEach((s, h) => {
      n += s.sample - this.results[h] - this.failed[h];
    });
    return n;
  }

  get failedRows(): number {
    return this.failed.reduce((s, v) => s + v, 0);
  }

  /** Equal for two runs that hold the same (key, stratum) pairs, whatever their order. */
  get fingerprint(): string {
    return `${this.count}:${this.sum1}:${this.sum2}`;
  }

  private stratumOf(line: SampledLine, file: string): number | null {
    if (line.stratum === undefined || line.stratum === null) return null;
    const h = typeof line.stratum === 'string' ? this.index.get(line.stratum) : undefined;
    if (h === undefined) {
      throw new BreError(
        'SAMPLE_INVALID',
        `Expected the stratum of row ${line.row ?? '?'} in ${this.dir}/${file} to be one of the ${this.block.strata.length} strata of its manifest.json, got ${JSON.stringify(line.stratum)}`,
        { field: 'stratum' },
      );
    }
    const s = this.block.strata[h];
    const want = s.population / s.sample;
    const w = line.weight;
    if (typeof w !== 'number' || !(Math.abs(w - want) <= WEIGHT_TOLERANCE * want)) {
      throw new BreError(
        'SAMPLE_INVALID',
        `Expected row ${line.row ?? '?'} in ${this.dir}/${file} (stratum '${s.name}', ${s.sample} of ${s.population}) to weigh ${want}, got ${JSON.stringify(w)}`,
        { field: 'weight' },
      );
    }
    return h;
  }

  private digest(key: string | null, h: number): void {
    const d = createHash('md5')
      .update(`${key ?? ''}\u0000${this.block.strata[h].name}`, 'utf8')
      .digest();
    this.count += 1;
    this.sum1 = (this.sum1 + d.readUIntBE(0, 6)) % MOD;
    this.sum2 = (this.sum2 + d.readUIntBE(6, 6)) % MOD;
  }
}
