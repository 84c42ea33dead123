/**
 * Feature shift: bins fixed from side A (deciles of a numeric feature, the most frequent values of a categorical
 * one), then both sides counted into the same bins, then PSI. Bins must be known before B is counted, and A's
 * full column is not kept in memory: the bins come from a uniform sample of A (see Reservoir), exact when A has
 * no more rows than the sample size.
 */
import type { Json } from '@bre-batch/core/types';
import { binIndex, decileEdges, psi, psiBand, type PsiBand } from './stats.js';

const MISSING_BIN = '(missing)';
const OTHER_BIN = '(other)';
/** Categorical features keep their this-many most frequent values in A's sample; the rest share "(other)". */
const MAX_CATEGORIES = 20;

export type FeatureBins =
  | { readonly type: 'numeric'; readonly edges: readonly number[] }
  | { readonly type: 'categorical'; readonly categories: readonly string[] };

function isNumber(v: Json | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** Bins for one feature from A's sampled values (null/absent values are ignored here; they get the missing bin). */
export function featureBins(sample: readonly (Json | undefined)[]): FeatureBins {
  const present = sample.filter((v) => v !== null && v !== undefined);
  if (present.every(isNumber)) return { type: 'numeric', edges: decileEdges(present as number[]) };
  const counts = new Map<string, number>();
  for (const v of present) {
    const s = categoryOf(v);
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  const categories = [...counts.entries()]
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
    .slice(0, MAX_CATEGORIES)
    .map(([c]) => c);
  return { type: 'categorical', categories };
}

function categoryOf(v: Json): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function formatEdge(x: number): string {
  return Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6)));
}

/** Bin labels, in bin order; the missing bin is last (and "(other)" before it for categorical features). */
export function binLabels(bins: FeatureBins): string[] {
  if (bins.type === 'categorical') return [...bins.categories, OTHER_BIN, MISSING_BIN];
  const e = bins.edges;
  if (e.length === 0) return ['all values', MISSING_BIN];
  const labels = [`≤ ${formatEdge(e[0])}`];
  for (let i = 1; i < e.length; i += 1) labels.push(`${formatEdge(e[i - 1])} < x ≤ ${formatEdge(e[i])}`);
  labels.push(`> ${formatEdge(e[e.length - 1])}`);
  labels.push(MISSING_BIN);
  return labels;
}

/** Index into binLabels(bins) of a value; non-numbers of a numeric feature count as missing. */
export function binOf(bins: FeatureBins, value: Json | undefined): number {
  if (bins.type === 'numeric') {
    if (!isNumber(value)) return bins.edges.length + 1;
    return binIndex(bins.edges, value);
  }
  if (value === null || value === undefined) return bins.categories.length + 1;
  const i = bins.categories.indexOf(categoryOf(value));
  return i === -1 ? bins.categories.length : i;
}

export interface FeatureFigures {
  readonly feature: string;
  readonly type: 'numeric' | 'categorical';
  readonly psi: number | null;
  readonly band: PsiBand | null;
  readonly bins: readonly { readonly label: string; readonly a: number; readonly b: number }[];
  /** Rows where the stage ran on that side (the PSI denominators). */
  readonly n_a: number;
  readonly n_b: number;
  /** Numeric only: means over the rows with a number on that side; changes over rows with a number on both. */
  readonly mean_a: number | null;
  readonly mean_b: number | null;
  readonly paired_n: number;
  readonly mean_change: number | null;
  readonly changed: number;
}

/** Counts one feature on both sides (matched keys only) into A's bins. O(bins) memory. */
export class FeatureAccumulator {
  private readonly a: number[];
  private readonly b: number[];
  private sumA = 0;
  private numA = 0;
  private sumB = 0;
  private numB = 0;
  private pairedN = 0;
  private pairedSum = 0;
  private changed = 0;

  constructor(
    readonly feature: string,
    readonly bins: FeatureBins,
  ) {
    const n = binLabels(bins).length;
    this.a = new Array<number>(n).fill(0);
    this.b = new Array<number>(n).fill(0);
  }

  /** `undefined` side = the stage did not run there (the row is then not counted on that side). */
  add(valueA: Json | undefined, valueB: Json | undefined, ranA: boolean, ranB: boolean): void {
    if (ranA) {
      this.a[binOf(this.bins, valueA)] += 1;
      if (isNumber(valueA)) {
        this.sumA += valueA;
        this.numA += 1;
      }
    }
    if (ranB) {
      this.b[binOf(this.bins, valueB)] += 1;
      if (isNumber(valueB)) {
        this.sumB += valueB;
        this.numB += 1;
      }
    }
    if (ranA && ranB) {
      if (isNumber(valueA) && isNumber(valueB)) {
        this.pairedN += 1;
        this.pairedSum += valueB - valueA;
      }
      if (!sameValue(valueA, valueB)) this.changed += 1;
    }
  }

  figures(): FeatureFigures {
    const value = psi(this.a, this.b);
    const labels = binLabels(this.bins);
    const numeric = this.bins.type === 'numeric';
    return {
      feature: this.feature,
      type: this.bins.type,
      psi: value,
      band: psiBand(value),
      bins: labels.map((label, i) => ({ label, a: this.a[i], b: this.b[i] })),
      n_a: this.a.reduce((s, v) => s + v, 0),
      n_b: this.b.reduce((s, v) => s + v, 0),
      mean_a: numeric && this.numA > 0 ? this.sumA / this.numA : null,
      mean_b: numeric && this.numB > 0 ? this.sumB / this.numB : null,
      paired_n: this.pairedN,
      mean_change: numeric && this.pairedN > 0 ? this.pairedSum / this.pairedN : null,
      changed: this.changed,
    };
  }
}

function sameValue(x: Json | undefined, y: Json | undefined): boolean {
  const nx = x === undefined ? null : x;
  const ny = y === undefined ? null : y;
  return nx === ny || (typeof nx === 'object' && typeof ny === 'object' && JSON.stringify(nx) === JSON.stringify(ny));
}

/**
 * Uniform sample of up to `size` items (Vitter's algorithm R) with a seeded generator, so the same inputs give
 * the same bins on every run.
 */
export class Reservoir<T> {
  readonly items: T[] = [];
  private seen = 0;
  private state: number;

  constructor(
    readonly size: number,
    seed = 0x9e3779b9,
  ) {
    this.state = seed >>> 0;
  }

  /** Whether the next offered item will be kept (lets callers skip building items that would be dropped). */
  offer(): number {
    this.seen += 1;
    if (this.items.length < this.size) return this.items.length;
    const j = Math.floor(this.random() * this.seen);
    return j < this.size ? j : -1;
  }

  put(slot: number, item: T): void {
    if (slot === this.items.length) this.items.push(item);
    else if (slot >= 0) this.items[slot] = item;
  }

  get count(): number {
    return this.seen;
  }

  // mulberry32: small, fast and good enough for sampling.
  private random(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
