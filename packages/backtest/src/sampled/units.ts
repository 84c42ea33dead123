/**
 * The compared keys of a sampled comparison, as the estimators need them: one unit per key with its stratum,
 * both sides' approvals and amounts, the outcome and each --score's values, in typed arrays that grow as the join
 * goes (about 30 bytes a key plus 16 per score: a sample of 100,000 keys with two scores costs about 6 MB). The
 * feature shares for the PSI are summed by stratum weight on the way (O(features × bins)).
 */
import type { Outcome } from '../comparison.js';
import { binLabels, binOf, type FeatureBins } from '../features.js';
import { scoreValue, type ScoreSpec } from '../score/spec.js';
import type { SideView } from '../side.js';

class Grow<T extends Float64Array | Int32Array | Int8Array | Uint8Array> {
  private buf: T;
  length = 0;

  constructor(private readonly make: (n: number) => T) {
    this.buf = make(1024);
  }

  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = this.make(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length] = v;
    this.length += 1;
  }

  view(): T {
    return this.buf.subarray(0, this.length) as T;
  }
}

const f64 = (n: number): Float64Array => new Float64Array(n);

/** What the estimates read, unit by unit (views of the collected arrays). */
export interface UnitTable {
  readonly stratum: Int32Array;
  readonly approvedA: Uint8Array;
  readonly approvedB: Uint8Array;
  /** Loan amount on each side, NaN when the side has none (not a finite number). */
  readonly amountA: Float64Array;
  readonly amountB: Float64Array;
  /** 1 bad, 0 good, −1 unknown. */
  readonly outcome: Int8Array;
  /** Per --score: the A and B values (NaN when missing or the stage did not run). */
  readonly scores: readonly { readonly a: Float64Array; readonly b: Float64Array }[];
}

export interface WeightedFeature {
  readonly feature: string;
  readonly bins: FeatureBins;
  /** Σ weight per bin on each side (rows where the stage ran). */
  readonly a: Float64Array;
  readonly b: Float64Array;
}

export class SampleUnits {
  private readonly stratum = new Grow((n) => new Int32Array(n));
  private readonly approvedA = new Grow((n) => new Uint8Array(n));
  private readonly approvedB = new Grow((n) => new Uint8Array(n));
  private readonly amountA = new Grow(f64);
  private readonly amountB = new Grow(f64);
  private readonly outcome = new Grow((n) => new Int8Array(n));
  private readonly scores: { a: Grow<Float64Array>; b: Grow<Float64Array> }[];
  private readonly features: WeightedFeature[] = [];

  /** @param weights design weight N_h / n_h of each stratum */
  constructor(
    readonly specs: readonly ScoreSpec[],
    featureBins: ReadonlyMap<string, FeatureBins>,
    private readonly weights: Float64Array,
  ) {
    this.scores = specs.map(() => ({ a: new Grow(f64), b: new Grow(f64) }));
    for (const [feature, bins] of featureBins) {
      const n = binLabels(bins).length;
      this.features.push({ feature, bins, a: new Float64Array(n), b: new Float64Array(n) });
    }
  }

  get size(): number {
    return this.stratum.length;
  }

  add(h: number, a: SideView, b: SideView, outcome: Outcome | undefined): void {
    this.stratum.push(h);
    this.approvedA.push(a.approved ? 1 : 0);
    this.approvedB.push(b.approved ? 1 : 0);
    this.amountA.push(a.amount ?? Number.NaN);
    this.amountB.push(b.amount ?? Number.NaN);
    this.outcome.push(outcome === 0 || outcome === 1 ? outcome : -1);
    this.specs.forEach((s, i) => {
      // A no-score marker (--score-missing) is no score: left out as a missing value is.
      this.scores[i].a.push(a.ran ? scoreValue(a.features[s.fieldA], s) : Number.NaN);
      this.scores[i].b.push(b.ran ? scoreValue(b.features[s.fieldB], s) : Number.NaN);
    });
    const w = this.weights[h];
    for (const f of this.features) {
      if (a.ran) f.a[binOf(f.bins, a.features[f.feature])] += w;
      if (b.ran) f.b[binOf(f.bins, b.features[f.feature])] += w;
    }
  }

  table(): UnitTable {
    return {
      stratum: this.stratum.view(),
      approvedA: this.approvedA.view(),
      approvedB: this.approvedB.view(),
      amountA: this.amountA.view(),
      amountB: this.amountB.view(),
      outcome: this.outcome.view(),
      scores: this.scores.map((s) => ({ a: s.a.view(), b: s.b.view() })),
    };
  }

  weightedFeatures(): readonly WeightedFeature[] {
    return this.features;
  }
}
