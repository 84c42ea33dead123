/**
 * fmtInt and fmtNum (packages/formats/src/page/svg.ts) write numbers as en-US's Intl.NumberFormat does, without loading
 * Intl: table-driven over the cases where a hand-written formatter goes wrong (ties, the sign of zero, groups,
 * binary fractions, large and tiny values), then over a seeded spread of values, Intl being the reference.
 */
import { describe, expect, it } from 'vitest';
import { fmtInt, fmtNum } from '@bre-batch/formats/page/svg';

const intl = (n: number, digits: number) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

describe('fmtNum', () => {
  it.each([
    [0, 0, '0'],
    [-0, 0, '-0'],
    [1234567.891, 2, '1,234,567.89'],
    [-1234.5, 0, '-1,235'],
    [2.5, 0, '3'],
    [-2.5, 0, '-3'],
    [1.005, 2, '1.01'],
    [2.675, 2, '2.68'],
    [999.995, 2, '1,000.00'],
    [-0.4, 0, '-0'],
    [0.1 + 0.2, 3, '0.300'],
    [1e-7, 2, '0.00'],
    [123456789012345680000, 0, '123,456,789,012,345,680,000'],
    [1e15 + 0.5, 1, '1,000,000,000,000,000.5'],
  ])('%s with %i decimals is %s, as Intl writes it', (n, digits, want) => {
    expect(intl(n, digits)).toBe(want);
    expect(fmtNum(n, digits)).toBe(want);
  });

  it('agrees with Intl over a spread of values', () => {
    // A small linear congruential generator: the same values every run.
    let seed = 31;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const differ: string[] = [];
    for (let i = 0; i < 1000; i += 1) {
      const n = (next() - 0.5) * 10 ** Math.floor(next() * 14);
      const cents = Math.round(next() * 1e7) / 1000;
      for (const v of [n, cents, -cents])
        for (const digits of [0, 1, 2, 3])
          if (fmtNum(v, digits) !== intl(v, digits)) differ.push(`${v} (${digits}): ${fmtNum(v, digits)}`);
    }
    expect(differ).toEqual([]);
  });

  it('says a dash for what is not a number', () => {
    for (const n of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) expect(fmtNum(n, 1)).toBe('–');
  });
});

describe('fmtInt', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1000, '1,000'],
    [-1234567, '-1,234,567'],
    [1234.5, '1,235'],
    [-1234.5, '-1,234'],
  ])('%s is %s', (n, want) => {
    expect(fmtInt(n)).toBe(want);
    expect(fmtInt(n)).toBe(Math.round(n).toLocaleString('en-US'));
  });
});
