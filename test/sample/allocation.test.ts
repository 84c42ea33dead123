/**
 * n_h from N_h (src/sample/allocation.ts), table-driven: the share rounded half up, the largest remainder of
 * --sample N (proportional and equal), the minimum of 2 where a stratum has 2, strata smaller than 2, and
 * empty strata.
 */
import { describe, expect, it } from 'vitest';
import { allocate, roundHalfUp, type AllocationRule } from '../../src/sample/allocation.js';

describe('roundHalfUp', () => {
  it.each([
    [0, 0],
    [0.49, 0],
    [0.5, 1],
    [1.5, 2],
    [2.5, 3],
    [2.4999, 2],
    // Products meant as halves but a hair below in binary.
    [0.15 * 10, 2],
    [0.35 * 10, 4],
    [1.1 * 5, 6],
    [0.45 * 10, 5],
  ])('%s -> %s', (x, n) => {
    expect(roundHalfUp(x)).toBe(n);
  });
});

describe('--sample-share P', () => {
  it.each([
    // share, N_h, n_h: round(P x N_h) half up, at least min(2, N_h), at most N_h
    [0.2, [61, 3, 100, 7, 10], [12, 2, 20, 2, 2]],
    [0.25, [10, 2, 1, 0], [3, 2, 1, 0]],
    [0.1, [25, 15, 5], [3, 2, 2]],
    [0.05, [30, 50], [2, 3]],
    [1, [5, 1, 0, 1000], [5, 1, 0, 1000]],
    [0.5, [3, 5, 4], [2, 3, 2]],
    [0.001, [1, 2, 3, 999], [1, 2, 2, 2]],
  ] as const)('share %s of %j -> %j', (share, pops, expected) => {
    expect(allocate(pops, { share })).toEqual(expected);
  });
});

describe('--sample N, proportional (largest remainder)', () => {
  it.each([
    // N, N_h, n_h
    [10, [50, 30, 20], [5, 3, 2]],
    // quotas 3.33, 3.33, 3.33: one remainder, to the first in order (the sizes tie)
    [10, [30, 30, 30], [4, 3, 3]],
    // quotas 4.6, 2.8, 2.6 -> 4, 2, 2 + the 2 left to .8 and .6
    [10, [46, 28, 26], [5, 3, 2]],
    // a tie of remainders goes to the larger stratum: quotas 1.5 and 4.5 -> 1 and 5; the minimum lifts the 1
    [6, [10, 30], [2, 5]],
    [8, [30, 10], [6, 2]],
    // the minimum of 2 lifts the small strata: the total exceeds N (5 + 2 + 2 = 9 > 7)
    [7, [90, 5, 5], [6, 2, 2]],
    // strata smaller than 2 give what they have
    [3, [100, 1, 1], [3, 1, 1]],
    // N at or above the population: every row
    [500, [40, 60], [40, 60]],
    [100, [40, 60], [40, 60]],
    // empty strata give nothing
    [10, [0, 50, 0, 50], [0, 5, 0, 5]],
    [1, [10], [2]],
  ] as const)('%s over %j -> %j', (size, pops, expected) => {
    expect(allocate(pops, { size, allocation: 'proportional' })).toEqual(expected);
  });

  it('gives exactly N when no minimum lifts a stratum', () => {
    const pops = [137, 411, 98, 1203, 55, 700];
    for (const size of [99, 100, 301, 777, 2000, 2603]) {
      const n = allocate(pops, { size, allocation: 'proportional' });
      expect(n.reduce((a, b) => a + b, 0)).toBe(size);
      n.forEach((k, i) => {
        expect(Math.abs(k - (size * pops[i]) / 2604)).toBeLessThan(1);
      });
    }
  });
});

describe('--sample N, equal', () => {
  it.each([
    [30, [100, 100, 100], [10, 10, 10]],
    // 10 / 3: the remainder to the larger stratum first, then in order
    [10, [50, 200, 50], [3, 4, 3]],
    [10, [50, 50, 50], [4, 3, 3]],
    // a small stratum gives all it has, the others share out the rest: 3 + 13 + 14 = 30
    [30, [3, 100, 200], [3, 13, 14]],
    // strata smaller than 2 and the minimum: 1 + 2 + 2, total above N
    [3, [1, 40, 40], [1, 2, 2]],
    // more asked than there is: every row
    [1000, [5, 7], [5, 7]],
    [10, [0, 40, 0, 40], [0, 5, 0, 5]],
  ] as const)('%s over %j -> %j', (size, pops, expected) => {
    expect(allocate(pops, { size, allocation: 'equal' })).toEqual(expected);
  });
});

describe('the limits every allocation keeps', () => {
  it('never more than N_h, at least min(2, N_h), on random strata', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 300; t += 1) {
      const pops = Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => Math.floor(rnd() * rnd() * 400));
      const rules: AllocationRule[] = [
        { share: Math.max(0.001, rnd()) },
        { size: 1 + Math.floor(rnd() * 900), allocation: 'proportional' },
        { size: 1 + Math.floor(rnd() * 900), allocation: 'equal' },
      ];
      for (const rule of rules) {
        const n = allocate(pops, rule);
        n.forEach((k, i) => {
          expect(k).toBeLessThanOrEqual(pops[i]);
          expect(k).toBeGreaterThanOrEqual(Math.min(2, pops[i]));
          expect(Number.isInteger(k)).toBe(true);
        });
        if ('size' in rule) {
          const total = pops.reduce((a, b) => a + b, 0);
          const minima = pops.reduce((a, N) => a + Math.min(2, N), 0);
          const sum = n.reduce((a, b) => a + b, 0);
          // N when there are N rows to give, never below; above it only by what the minima add
          expect(sum).toBeGreaterThanOrEqual(Math.min(rule.size, total));
          expect(sum).toBeLessThanOrEqual(Math.max(Math.min(rule.size, total), 0) + minima);
        }
      }
    }
  });

  it('refuses a stratum size that is not a whole number', () => {
    expect(() => allocate([3, -1], { share: 0.5 })).toThrow(/whole numbers >= 0, got -1/);
  });
});
