/**
 * How many rows each stratum gives (n_h), from the stratum sizes N_h (pure). Every stratum with rows gives
 * at least min(2, N_h), so that each has a variance; none gives more than it has.
 *
 * - `--sample-share P`: n_h = round(P x N_h), halves rounded up.
 * - `--sample N`, proportional: the largest-remainder (Hamilton) apportionment of N over the N_h; the minima
 *   may then make the total exceed N (by at most 2 a stratum): a stratum of 3 rows in a 1% sample still
 *   gives 2.
 * - `--sample N`, equal: the same count in every stratum, N / H, largest remainder; a stratum with fewer
 *   rows than its count gives all it has, and what it cannot give goes to the others in equal parts
 *   (so the total is N whenever the strata hold N rows), then the same minima.
 *
 * Ties of the largest remainder go to the larger stratum, then to the first in the strata's order.
 */
import type { Allocation } from '@bre-batch/formats/allocation';

export type AllocationRule = { readonly share: number } | { readonly size: number; readonly allocation: Allocation };

/**
 * round(x), halves up, for x = P x N_h computed in floating point: 0.15 x 10 is 1.4999999999999998 in binary,
 * which is meant as 1.5. A product within a billionth (relative) of a half is taken as the half: a share
 * typed with fewer than nine significant digits cannot be nearer a half than that without being one.
 */
export function roundHalfUp(x: number): number {
  return Math.floor(x + 0.5 + 1e-9 * Math.max(1, Math.abs(x)));
}

/** Indices of the strata, the larger first, then in the strata's order: who gets a remainder first. */
function byTieOrder(indices: readonly number[], populations: readonly number[]): number[] {
  return [...indices].sort((a, b) => populations[b] - populations[a] || a - b);
}

/** Largest remainder of `total` over `populations` in proportion; every N_h when they hold no more than `total`. */
function proportional(total: number, populations: readonly number[]): number[] {
  const sum = populations.reduce((a, b) => a + b, 0);
  if (total >= sum) return [...populations];
  // Integer arithmetic (total x N_h < 2^53): the remainders compare exactly.
  const n = populations.map((N) => Math.floor((total * N) / sum));
  const rem = populations.map((N) => (total * N) % sum);
  let left = total - n.reduce((a, b) => a + b, 0);
  const order = byTieOrder(
    populations.map((_, i) => i).filter((i) => rem[i] > 0),
    populations,
  ).sort((a, b) => rem[b] - rem[a]);
  for (const i of order) {
    if (left === 0) break;
    n[i] += 1;
    left -= 1;
  }
  return n;
}

/**
 * The same count in every stratum: total / H, a stratum smaller than its count giving all its rows and the
 * others sharing out the rest (water-filling), the last remainder one each to the first in tie order.
 */
function equal(total: number, populations: readonly number[]): number[] {
  const n = populations.map(() => 0);
  let open = populations.map((_, i) => i).filter((i) => populations[i] > 0);
  let left = total;
  while (open.length > 0 && left > 0) {
    const each = Math.floor(left / open.length);
    const small = open.filter((i) => populations[i] <= each);
    if (small.length > 0) {
      for (const i of small) {
        n[i] = populations[i];
        left -= populations[i];
      }
      open = open.filter((i) => populations[i] > each);
      continue;
    }
    // Every open stratum has more than `each` rows: each takes `each`, and the first `left` of them one more.
    for (const i of open) n[i] = each;
    left -= each * open.length;
    for (const i of byTieOrder(open, populations).slice(0, left)) n[i] += 1;
    break;
  }
  return n;
}

/** n_h for each N_h in `populations` (in the strata's order). */
export function allocate(populations: readonly number[], rule: AllocationRule): number[] {
  for (const N of populations)
    if (!Number.isSafeInteger(N) || N < 0)
      throw new RangeError(`Expected stratum sizes to be whole numbers >= 0, got ${N}`);
  const drawn =
    'share' in rule
      ? populations.map((N) => roundHalfUp(rule.share * N))
      : rule.allocation === 'equal'
        ? equal(rule.size, populations)
        : proportional(rule.size, populations);
  return drawn.map((k, i) => Math.min(populations[i], Math.max(k, Math.min(2, populations[i]))));
}
