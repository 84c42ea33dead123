/**
 * The distribution of one score over the compared keys, as every score statistic needs it: the distinct score
 * values in ascending order with, for each, how many keys had a good (0), bad (1) or unknown outcome there.
 * O(distinct values) memory; AUC, DeLong, KS, deciles, IV and the trade-off are exact functions of this table,
 * ties included (a tie is one row of the table).
 *
 * Orientation: a table is "oriented" when a higher value means a better applicant (lower risk). A score where
 * lower is better (a risk grade, a probability of default) is oriented by negating its values; `rawValue`
 * turns an oriented value back into what the user sees.
 */

import type { Outcome } from '../comparison.js';

export type Direction = 'higher_is_better' | 'lower_is_better';

export interface ScoreTable {
  /** Distinct values, strictly ascending. */
  readonly values: Float64Array;
  readonly good: Uint32Array;
  readonly bad: Uint32Array;
  readonly unknown: Uint32Array;
  readonly nGood: number;
  readonly nBad: number;
  readonly nUnknown: number;
}

/**
 * Merges three ascending arrays (the scores of the good, bad and unknown keys) into a table. The caller sorts
 * (Float64Array.prototype.sort is numeric); NaN must not be present (a missing score is not a value).
 */
export function tableFromSorted(good: Float64Array, bad: Float64Array, unknown: Float64Array): ScoreTable {
  const lists = [good, bad, unknown];
  // Two passes over the merge (count the distinct values, then fill): the table is typed arrays of exactly its
  // size, never growing lists, which matters when nearly every key has its own value.
  const merge = (visit: (value: number, counts: readonly number[]) => void): void => {
    const at = [0, 0, 0];
    const counts = [0, 0, 0];
    for (;;) {
      let next = Infinity;
      let any = false;
      for (let c = 0; c < 3; c += 1) {
        if (at[c] < lists[c].length) {
          any = true;
          if (lists[c][at[c]] < next) next = lists[c][at[c]];
        }
      }
      if (!any) return;
      for (let c = 0; c < 3; c += 1) {
        let n = 0;
        while (at[c] < lists[c].length && lists[c][at[c]] === next) {
          at[c] += 1;
          n += 1;
        }
        counts[c] = n;
      }
      visit(next, counts);
    }
  };
  let distinct = 0;
  merge(() => {
    distinct += 1;
  });
  const values = new Float64Array(distinct);
  const counts = [new Uint32Array(distinct), new Uint32Array(distinct), new Uint32Array(distinct)];
  let i = 0;
  merge((value, c) => {
    // -0 and 0 are one value (they compare equal); keep the one that prints as "0".
    values[i] = value === 0 ? 0 : value;
    counts[0][i] = c[0];
    counts[1][i] = c[1];
    counts[2][i] = c[2];
    i += 1;
  });
  return {
    values,
    good: counts[0],
    bad: counts[1],
    unknown: counts[2],
    nGood: good.length,
    nBad: bad.length,
    nUnknown: unknown.length,
  };
}

/** A table from (score, outcome) pairs in any order; scores that are not finite numbers are left out. */
export function tableOf(items: Iterable<{ readonly score: number; readonly outcome: Outcome }>): ScoreTable {
  const by: [number[], number[], number[]] = [[], [], []];
  for (const { score, outcome } of items) {
    if (!Number.isFinite(score)) continue;
    by[outcome === 0 ? 0 : outcome === 1 ? 1 : 2].push(score);
  }
  const sorted = by.map((l) => Float64Array.from(l).sort());
  return tableFromSorted(sorted[0], sorted[1], sorted[2]);
}

/** The same table with higher = better: unchanged for higher_is_better, negated and reversed otherwise. */
export function oriented(t: ScoreTable, direction: Direction): ScoreTable {
  if (direction === 'higher_is_better') return t;
  const n = t.values.length;
  const values = new Float64Array(n);
  const good = new Uint32Array(n);
  const bad = new Uint32Array(n);
  const unknown = new Uint32Array(n);
  for (let i = 0; i < n; i += 1) {
    const j = n - 1 - i;
    // 0 - x, not -x: a score of 0 must stay 0, not become -0 (which prints as "-0" and breaks equality tests).
    values[i] = 0 - t.values[j];
    good[i] = t.good[j];
    bad[i] = t.bad[j];
    unknown[i] = t.unknown[j];
  }
  return { values, good, bad, unknown, nGood: t.nGood, nBad: t.nBad, nUnknown: t.nUnknown };
}

/** A value of an oriented table as the user's score. */
export function rawValue(orientedValue: number, direction: Direction): number {
  return direction === 'higher_is_better' ? orientedValue : 0 - orientedValue;
}

/** Orients one raw score. */
export function orient(raw: number, direction: Direction): number {
  return direction === 'higher_is_better' ? raw : 0 - raw;
}

/** Index of `value` in the table's values, or -1 (binary search). */
export function indexOfValue(t: ScoreTable, value: number): number {
  let lo = 0;
  let hi = t.values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = t.values[mid];
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -1;
}
