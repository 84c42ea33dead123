/** Where a keyset page may end (src/input/db/page.ts): never inside a run of keys the database holds equal. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endsGroup, splitPage } from '../../../src/input/db/page.js';

describe('splitPage', () => {
  // ranks as fetched (LIMIT n + 1), n, then what the page keeps, whether the tail group is fetched, and where the next page starts.
  it.each([
    { ranks: [], limit: 3, keep: 0, tail: false, next: null, why: 'an empty relation' },
    { ranks: ['1', '2'], limit: 3, keep: 2, tail: false, next: null, why: 'fewer rows than a page: the end' },
    {
      ranks: ['1', '2', '3'],
      limit: 3,
      keep: 3,
      tail: false,
      next: null,
      why: 'exactly a page and no look-ahead row: the end',
    },
    { ranks: ['1', '2', '3', '4'], limit: 3, keep: 3, tail: false, next: 2, why: 'the look-ahead row has another key' },
    { ranks: ['1', '2', '2', '3'], limit: 3, keep: 3, tail: false, next: 2, why: 'a whole group ends the page' },
    { ranks: ['1', '2', '3', '3'], limit: 3, keep: 2, tail: true, next: 2, why: 'the last key goes on past the page' },
    {
      ranks: ['1', '2', '2', '2'],
      limit: 3,
      keep: 1,
      tail: true,
      next: 2,
      why: 'a group that started inside the page goes on',
    },
    { ranks: ['1', '1', '1', '1'], limit: 3, keep: 0, tail: true, next: 2, why: 'one key fills the page and more' },
    { ranks: ['1', '1'], limit: 1, keep: 0, tail: true, next: 0, why: 'a page of one row' },
  ])('$why', ({ ranks, limit, keep, tail, next }) => {
    expect(splitPage(ranks, limit)).toEqual({ keep, fetchTailGroup: tail, nextKeyIndex: next });
  });

  it('refuses a page of no rows', () => {
    expect(() => splitPage(['1'], 0)).toThrow(RangeError);
  });

  it('read page by page, every row comes once and every group whole (any keys, any page size)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        (raw, limit) => {
          const keys = [...raw].sort((a, b) => a - b);
          const out: { key: number; end: boolean }[] = [];
          let after: number | undefined;
          for (let guard = 0; guard < 200; guard += 1) {
            const rest = keys.filter((k) => after === undefined || k > after);
            const fetched = rest.slice(0, limit + 1);
            // dense ranks within the fetched rows, as the page's window function gives them
            const distinct = [...new Set(fetched)];
            const ranks = fetched.map((k) => String(distinct.indexOf(k) + 1));
            const split = splitPage(ranks, limit);
            for (let i = 0; i < split.keep; i += 1) out.push({ key: fetched[i], end: endsGroup(ranks, split.keep, i) });
            if (split.fetchTailGroup) {
              const tailKey = fetched[split.nextKeyIndex!];
              const group = keys.filter((k) => k === tailKey);
              group.forEach((k, i) => {
                out.push({ key: k, end: i === group.length - 1 });
              });
            }
            if (split.nextKeyIndex === null) break;
            after = fetched[split.nextKeyIndex];
          }
          expect(out.map((o) => o.key)).toEqual(keys);
          // A group ends exactly where the next key differs (or at the end).
          expect(out.map((o) => o.end)).toEqual(keys.map((k, i) => i === keys.length - 1 || keys[i + 1] !== k));
        },
      ),
    );
  });
});
