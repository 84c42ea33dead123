import { describe, expect, it } from 'vitest';
import { binIndex, decileEdges, newcombePaired, psi, psiBand, rate, wilson } from '../src/stats.js';

describe('wilson', () => {
  // Reference values: Wilson score interval, z = 1.959964 (e.g. Newcombe 1998a table I; R binom::binom.wilson).
  it.each([
    [5, 10, 0.236593, 0.763407],
    [2, 4, 0.150039, 0.849961],
    [1, 1, 0.206549, 1],
    [0, 2, 0, 0.65762],
    [3, 8, 0.136844, 0.694258],
    [1, 3, 0.061492, 0.79234],
  ])('%i of %i', (x, n, lo, hi) => {
    const ci = wilson(x, n);
    expect(ci?.lower).toBeCloseTo(lo, 5);
    expect(ci?.upper).toBeCloseTo(hi, 5);
  });

  it('is null without observations', () => {
    expect(wilson(0, 0)).toBeNull();
    expect(rate(0, 0)).toEqual({ count: 0, n: 0, rate: null, ci: null });
  });
});

describe('newcombePaired', () => {
  it('matches the published square-and-add interval (Fagerland et al. ch. 8, Cavo 2012 data)', () => {
    // Table [[59, 6], [16, 80]]: the book reports p1+ − p+1 = −0.0621 (95% CI −0.1186 to −0.0046); ours is B − A.
    const r = newcombePaired({ bothYes: 59, aOnly: 6, bOnly: 16, bothNo: 80 });
    expect(r?.difference).toBeCloseTo(0.0621, 4);
    expect(r?.ci.lower).toBeCloseTo(0.0046, 4);
    expect(r?.ci.upper).toBeCloseTo(0.1186, 4);
  });

  it('is symmetric when swaps balance, and mirrors when A and B trade places', () => {
    const r = newcombePaired({ bothYes: 3, aOnly: 2, bOnly: 2, bothNo: 3 });
    expect(r?.difference).toBe(0);
    expect(r?.ci.lower).toBeCloseTo(-0.372514, 5);
    expect(r?.ci.upper).toBeCloseTo(0.372514, 5);
    const x = newcombePaired({ bothYes: 40, aOnly: 3, bOnly: 12, bothNo: 45 });
    const y = newcombePaired({ bothYes: 40, aOnly: 12, bOnly: 3, bothNo: 45 });
    expect(y?.difference).toBeCloseTo(-(x?.difference ?? 0), 12);
    expect(y?.ci.lower).toBeCloseTo(-(x?.ci.upper ?? 0), 12);
    expect(y?.ci.upper).toBeCloseTo(-(x?.ci.lower ?? 0), 12);
  });

  it('is narrower than treating the sides as independent when decisions mostly agree', () => {
    const r = newcombePaired({ bothYes: 480, aOnly: 5, bOnly: 15, bothNo: 500 });
    const w = (r?.ci.upper ?? 0) - (r?.ci.lower ?? 0);
    expect(w).toBeLessThan(0.03);
    expect(r?.ci.lower).toBeGreaterThan(0);
  });

  it('handles empty margins (everyone approved on both sides) and no keys', () => {
    const r = newcombePaired({ bothYes: 10, aOnly: 0, bOnly: 0, bothNo: 0 });
    expect(r?.difference).toBe(0);
    expect(r?.ci.lower).toBeLessThanOrEqual(0);
    expect(r?.ci.upper).toBeGreaterThanOrEqual(0);
    expect(newcombePaired({ bothYes: 0, aOnly: 0, bOnly: 0, bothNo: 0 })).toBeNull();
  });
});

describe('psi', () => {
  it.each([
    ['identical shares', [10, 20, 30], [1, 2, 3], 0],
    [
      'hand-computed shift',
      [50, 50],
      [25, 75],
      (0.25 - 0.5) * Math.log(0.25 / 0.5) + (0.75 - 0.5) * Math.log(0.75 / 0.5),
    ],
    ['empty bin floored at 1e-4', [10, 0], [5, 5], (0.5 - 1) * Math.log(0.5 / 1) + (0.5 - 1e-4) * Math.log(0.5 / 1e-4)],
    ['empty on both sides adds nothing', [5, 5, 0], [5, 5, 0], 0],
  ])('%s', (_name, a, b, expected) => {
    expect(psi(a, b)).toBeCloseTo(expected, 10);
  });

  it('is null when a side has no observation and refuses unequal bins', () => {
    expect(psi([0, 0], [1, 2])).toBeNull();
    expect(() => psi([1], [1, 2])).toThrow(/equal length/);
  });

  it.each([
    [null, null],
    [0, 'stable'],
    [0.0999, 'stable'],
    [0.1, 'moderate'],
    [0.2499, 'moderate'],
    [0.25, 'major'],
    [3, 'major'],
  ])('band of %s is %s', (value, band) => {
    expect(psiBand(value)).toBe(band);
  });
});

describe('decileEdges and binIndex', () => {
  it.each([
    ['ten distinct values', [10, 9, 8, 7, 6, 5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['nine values', [510, 520, 530, 540, 550, 560, 570, 580, 590], [510, 520, 530, 540, 550, 560, 570, 580, 590]],
    ['twenty values', Array.from({ length: 20 }, (_, i) => i + 1), [2, 4, 6, 8, 10, 12, 14, 16, 18]],
    ['ties collapse', [1, 1, 1, 1, 1, 1, 1, 1, 2, 3], [1, 2]],
    ['one value', [7], [7]],
    ['empty', [], []],
  ])('%s', (_name, sample, edges) => {
    expect(decileEdges(sample)).toEqual(edges);
  });

  it.each([
    [0, 0],
    [1, 0],
    [1.5, 1],
    [2, 1],
    [9, 8],
    [9.5, 9],
    [100, 9],
  ])('value %s falls in bin %s of edges 1..9 (upper edge inclusive)', (x, bin) => {
    expect(binIndex([1, 2, 3, 4, 5, 6, 7, 8, 9], x)).toBe(bin);
  });
});
