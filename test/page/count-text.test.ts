/**
 * countText (packages/core/src/units.ts) writes a number as `toLocaleString('en-US')` does, without loading Intl
 * for a whole number (the plan and progress lines of every run): the cases where a hand-written formatter goes
 * wrong (the sign of zero, groups, the largest safe integers), a seeded spread of values, and what it leaves to
 * Intl (fractions, unsafe integers, NaN and the infinities), Intl being the reference.
 */
import { describe, expect, it } from 'vitest';
import { countText } from '@bre-batch/core/units';

const intl = (n: number) => n.toLocaleString('en-US');

describe('countText', () => {
  it.each([
    [0, '0'],
    [-0, '-0'],
    [7, '7'],
    [999, '999'],
    [1000, '1,000'],
    [-1000, '-1,000'],
    [123456, '123,456'],
    [1234567, '1,234,567'],
    [Number.MAX_SAFE_INTEGER, '9,007,199,254,740,991'],
    [-Number.MAX_SAFE_INTEGER, '-9,007,199,254,740,991'],
  ])('%s is %s, as Intl writes it', (n, want) => {
    expect(intl(n)).toBe(want);
    expect(countText(n)).toBe(want);
  });

  it('agrees with Intl over a spread of whole numbers, and leaves any other number to it', () => {
    // A small linear congruential generator: the same values every run.
    let seed = 17;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const differ: string[] = [];
    const values = [1.5, -2.25, 1234.5678, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (let i = 0; i < 1000; i += 1) values.push(Math.round((next() - 0.5) * 10 ** Math.floor(next() * 16)));
    for (const n of values) if (countText(n) !== intl(n)) differ.push(`${n}: ${countText(n)} vs ${intl(n)}`);
    expect(differ).toEqual([]);
  });
});
