/**
 * Interval estimates used by the back-test. Pure functions of counts.
 *
 * Why these methods: approval rates near 0 or 1 and small segments are the norm in credit back-tests, where the
 * textbook Wald interval (p ± z·√(p(1−p)/n)) leaves [0, 1] and under-covers. Wilson's score interval does not.
 * The two runs are over the SAME applicants (a paired design), so the difference of approval rates uses
 * Newcombe's interval for paired proportions (Newcombe 1998, Stat Med 17:2635, method 10), which combines the
 * two Wilson intervals with the correlation φ of the 2×2 swap table; treating the sides as independent samples
 * would make the interval far too wide when most decisions agree.
 */

/** z for a two-sided 95% interval: qnorm(0.975), as R's confint() (design/ uses it too). */
export const Z95 = 1.959963984540054;

export interface Interval {
  readonly lower: number;
  readonly upper: number;
}

/** Wilson score interval for x successes out of n; null when n is 0. */
export function wilson(x: number, n: number, z: number = Z95): Interval | null {
  if (n <= 0) return null;
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

/**
 * The 2×2 table of a paired binary outcome (here: approved on side A / on side B for the same key).
 *   bothYes = A yes, B yes; aOnly = A yes, B no (swap-out); bOnly = A no, B yes (swap-in); bothNo = neither.
 */
export interface PairedCounts {
  readonly bothYes: number;
  readonly aOnly: number;
  readonly bOnly: number;
  readonly bothNo: number;
}

export interface PairedDifference {
  /** pB − pA = (bOnly − aOnly) / n. */
  readonly difference: number;
  readonly ci: Interval;
}

/**
 * Newcombe (1998) method 10 for pB − pA on paired data; null when n is 0.
 * φ = C/√((a+b)(c+d)(a+c)(b+d)) with C = ad − bc − n/2 when ad − bc > n/2, 0 when 0 ≤ ad − bc ≤ n/2, and ad − bc
 * when negative; φ = 0 when a margin is empty (the paper's conventions; the same as Fagerland, Lydersen & Laake,
 * "Statistical Analysis of Contingency Tables", ch. 8, "Newcombe square-and-add").
 */
export function newcombePaired(t: PairedCounts, z: number = Z95): PairedDifference | null {
  const { bothYes: a, aOnly: b, bOnly: c, bothNo: d } = t;
  const n = a + b + c + d;
  if (n <= 0) return null;
  const pA = (a + b) / n;
  const pB = (a + c) / n;
  const wA = wilson(a + b, n, z) as Interval;
  const wB = wilson(a + c, n, z) as Interval;
  const marg = (a + b) * (c + d) * (a + c) * (b + d);
  // Newcombe's φ with his continuity correction: a positive ad − bc is reduced by n/2 (not below 0).
  const cross = a * d - b * c;
  const num = cross > n / 2 ? cross - n / 2 : Math.min(cross, 0);
  const phi = marg === 0 ? 0 : num / Math.sqrt(marg);
  const diff = pB - pA;
  // θ = pB − pA: the lower limit pairs B's lower distance with A's upper distance, and vice versa.
  const dl = Math.sqrt(
    Math.max(0, (pB - wB.lower) ** 2 - 2 * phi * (pB - wB.lower) * (wA.upper - pA) + (wA.upper - pA) ** 2),
  );
  const du = Math.sqrt(
    Math.max(0, (wB.upper - pB) ** 2 - 2 * phi * (wB.upper - pB) * (pA - wA.lower) + (pA - wA.lower) ** 2),
  );
  return { difference: diff, ci: { lower: Math.max(-1, diff - dl), upper: Math.min(1, diff + du) } };
}

/** A rate with its Wilson interval, as compare.json shows it. */
export interface Rate {
  readonly count: number;
  readonly n: number;
  /** null when n is 0. */
  readonly rate: number | null;
  readonly ci: Interval | null;
}

export function rate(count: number, n: number): Rate {
  return { count, n, rate: n > 0 ? count / n : null, ci: wilson(count, n) };
}

/** Floor applied to a bin's share before taking the log, so an empty bin gives a finite PSI. */
export const PSI_EPSILON = 1e-4;

/**
 * Population stability index of B against A over the same bins:
 *   PSI = Σ (b_i − a_i) · ln(b_i / a_i), with a_i = max(countA_i / nA, ε), b_i likewise.
 * null when either side has no observation.
 */
export function psi(
  countsA: readonly number[],
  countsB: readonly number[],
  epsilon: number = PSI_EPSILON,
): number | null {
  if (countsA.length !== countsB.length)
    throw new RangeError(`Expected bins of equal length, got ${countsA.length} and ${countsB.length}`);
  const nA = countsA.reduce((s, v) => s + v, 0);
  const nB = countsB.reduce((s, v) => s + v, 0);
  if (nA === 0 || nB === 0) return null;
  let total = 0;
  for (let i = 0; i < countsA.length; i += 1) {
    const a = Math.max(countsA[i] / nA, epsilon);
    const b = Math.max(countsB[i] / nB, epsilon);
    total += (b - a) * Math.log(b / a);
  }
  return total;
}

export type PsiBand = 'stable' | 'moderate' | 'major';

/** The usual reading: below 0.1 no real shift, 0.1 to below 0.25 moderate, 0.25 and above major. */
export function psiBand(value: number | null): PsiBand | null {
  if (value === null) return null;
  if (value < 0.1) return 'stable';
  if (value < 0.25) return 'moderate';
  return 'major';
}

/**
 * Decile cut points of a sample: q_k = the smallest value x with F(x) ≥ k/10 (inverse empirical CDF,
 * Hyndman–Fan type 1), k = 1..9, duplicates removed. Bins are then (−∞, q1], (q1, q2], ..., (q_last, ∞),
 * so with distinct values each bin holds a tenth of A's sample.
 */
export function decileEdges(sample: readonly number[]): number[] {
  const sorted = [...sample].sort((x, y) => x - y);
  const n = sorted.length;
  if (n === 0) return [];
  const edges: number[] = [];
  for (let k = 1; k <= 9; k += 1) {
    const q = sorted[Math.ceil((k * n) / 10) - 1];
    if (edges.length === 0 || q > edges[edges.length - 1]) edges.push(q);
  }
  return edges;
}

/** Index of the bin (per decileEdges) holding x: the number of edges strictly below x. */
export function binIndex(edges: readonly number[], x: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (edges[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
