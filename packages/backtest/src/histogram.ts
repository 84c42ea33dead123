/**
 * Histogram of loan amount changes (B − A) over keys both sides approved. Zero changes are counted apart
 * ("no change"): they are usually the bulk and would flatten every other bar. The non-zero changes go into
 * about `target` equal bins of a "nice" width (1, 2, 2.5 or 5 × 10^k) covering [min, max]; a bin is
 * [lower, upper), the last one closed.
 */
import { niceStep } from '@bre-batch/formats/page/scale';

interface HistogramBin {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
}

export interface Histogram {
  readonly unchanged: number;
  readonly bins: readonly HistogramBin[];
}

/** Changes smaller than this are "no change" (amounts are money; float noise must not count as a change). */
const ZERO_CHANGE = 1e-9;

/** Bin edges for non-zero values within [min, max]. */
export function histogramEdges(min: number, max: number, target = 20): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max) || min > max) return [];
  if (min === max) {
    const w = niceStep(Math.abs(min) / 10 || 1);
    const lo = Math.floor(min / w) * w;
    return [lo, lo + w];
  }
  const step = niceStep((max - min) / target);
  const start = Math.floor(min / step) * step;
  const edges = [start];
  while (edges[edges.length - 1] <= max) edges.push(start + edges.length * step);
  return edges;
}

/** Counts values into bins; used on a stream, so it is a small stateful helper. */
export class HistogramCounter {
  private readonly counts: number[];
  private zero = 0;

  constructor(private readonly edges: readonly number[]) {
    this.counts = new Array<number>(Math.max(0, edges.length - 1)).fill(0);
  }

  add(x: number): void {
    if (Math.abs(x) < ZERO_CHANGE) {
      this.zero += 1;
      return;
    }
    const e = this.edges;
    if (e.length < 2) return;
    // Binary search for the last edge <= x; values at the top edge fall into the last bin.
    let lo = 0;
    let hi = e.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (e[mid] <= x) lo = mid;
      else hi = mid;
    }
    this.counts[Math.min(lo, this.counts.length - 1)] += 1;
  }

  result(): Histogram {
    return {
      unchanged: this.zero,
      bins: this.counts.map((count, i) => ({ lower: this.edges[i], upper: this.edges[i + 1], count })),
    };
  }
}

/** Histogram of an in-memory list (tests, small runs). */
export function histogramOf(values: Iterable<number>, target = 20): Histogram {
  let min = Infinity;
  let max = -Infinity;
  const list: number[] = [];
  for (const v of values) {
    list.push(v);
    if (Math.abs(v) >= ZERO_CHANGE) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const counter = new HistogramCounter(min <= max ? histogramEdges(min, max, target) : []);
  for (const v of list) counter.add(v);
  return counter.result();
}
