/**
 * A database input's resume point (src/pipeline/frontier-tracker.ts): it moves only over rows done in read order,
 * stops only at the last row of a key, and a row that is never done holds it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrontierTracker } from '../../src/pipeline/frontier-tracker.js';

/** Rows 1..n with keys k1..kn, each the last of its key unless listed in `inGroup`. */
function feed(t: FrontierTracker, from: number, n: number, inGroup: readonly number[] = []): void {
  for (let r = from; r < from + n; r += 1) t.read({ row: r, sourceKey: `k${r}`, groupEnd: !inGroup.includes(r) });
}

describe('FrontierTracker', () => {
  it('has no point until a row is done, then follows the done prefix', () => {
    const t = new FrontierTracker();
    feed(t, 1, 5);
    expect(t.point).toBeUndefined();
    t.done(2);
    t.done(3);
    expect(t.point).toBeUndefined(); // row 1 is still in flight
    t.done(1);
    expect(t.point).toEqual({ row: 3, key: 'k3' });
    t.done(5);
    expect(t.point).toEqual({ row: 3, key: 'k3' });
    t.done(4);
    expect(t.point).toEqual({ row: 5, key: 'k5' });
    expect(t.behind).toBe(0);
  });

  // Orders of done rows, table-driven: which rows are done, in what order, and the point after each.
  it.each([
    { why: 'in order', groups: [], order: [1, 2, 3, 4], points: [1, 2, 3, 4] },
    { why: 'reversed', groups: [], order: [4, 3, 2, 1], points: [null, null, null, 4] },
    { why: 'a key of rows 2-3: never stops inside it', groups: [2], order: [1, 2, 3, 4], points: [1, 1, 3, 4] },
    { why: 'a row left not done holds the point', groups: [], order: [1, 3, 4], points: [1, 1, 1] },
    { why: 'settling twice changes nothing', groups: [], order: [1, 1, 2], points: [1, 1, 2] },
  ])('$why', ({ groups, order, points }) => {
    const t = new FrontierTracker();
    feed(t, 1, 4, groups);
    const seen = order.map((r) => {
      t.done(r);
      return t.point?.row ?? null;
    });
    expect(seen).toEqual(points);
  });

  it('starts from a resume point, and keeps it until a later row passes', () => {
    const t = new FrontierTracker({ row: 100, key: 'k100' });
    expect(t.point).toEqual({ row: 100, key: 'k100' });
    expect(() => t.read({ row: 1, sourceKey: 'x', groupEnd: true })).toThrow(/expected row 101/);
    feed(t, 101, 2);
    t.done(102);
    expect(t.point).toEqual({ row: 100, key: 'k100' });
    t.done(101);
    expect(t.point).toEqual({ row: 102, key: 'k102' });
  });

  it('the NULL keys end with a point whose key is null', () => {
    const t = new FrontierTracker();
    t.read({ row: 1, sourceKey: null, groupEnd: false });
    t.read({ row: 2, sourceKey: null, groupEnd: true });
    t.done(1);
    expect(t.point).toBeUndefined();
    t.done(2);
    expect(t.point).toEqual({ row: 2, key: null });
  });

  it('ignores rows it never read or already passed', () => {
    const t = new FrontierTracker();
    feed(t, 1, 2);
    t.done(7);
    t.done(1);
    t.done(1);
    expect(t.point).toEqual({ row: 1, key: 'k1' });
  });

  it('over many rows done in any order: the point is the last group end before the first row not done', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9000 }),
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, seed, share) => {
          const t = new FrontierTracker();
          const ends = (r: number) => r % 3 !== 1; // keys of rows (1,2), (3), (4,5), (6)...: not every row ends one
          for (let r = 1; r <= n; r += 1) t.read({ row: r, sourceKey: `k${r}`, groupEnd: ends(r) });
          // A pseudo-random order of a share of the rows.
          let x = seed >>> 0;
          const done = new Set<number>();
          const rows = Array.from({ length: n }, (_, i) => i + 1);
          for (let i = rows.length - 1; i > 0; i -= 1) {
            x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
            const j = x % (i + 1);
            [rows[i], rows[j]] = [rows[j], rows[i]];
          }
          for (const r of rows.slice(0, Math.floor(n * share))) {
            t.done(r);
            done.add(r);
          }
          let expected: number | undefined;
          for (let r = 1; r <= n && done.has(r); r += 1) if (ends(r)) expected = r;
          expect(t.point?.row).toBe(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
