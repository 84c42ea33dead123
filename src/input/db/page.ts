/**
 * Where a keyset page may end (pure). A page is fetched with one row more than it keeps (src/db/keyset.ts:
 * LIMIT n + 1), each row with the dense rank of its key within the page: the database says which rows share
 * a key, in its own collation. A page must not end inside a run of equal keys, or the next page (`key > last`)
 * would skip the rest of that run:
 *
 * - fewer than n + 1 rows came: that is the end of the relation; every group in the page is whole;
 * - row n + 1 has another key than row n: the first n rows are whole groups; row n + 1 comes again with the
 *   next page;
 * - row n + 1 shares row n's key: that group may go on past the page; the page keeps the groups before it, and
 *   the reader fetches the whole group by its key (`key = $last`) before the next page.
 */

export interface PageSplit {
  /** The first `keep` rows are whole groups, kept as they are. */
  readonly keep: number;
  /** After the kept rows, fetch every row of the key at `tailKeyIndex` (the group the page ended in). */
  readonly fetchTailGroup: boolean;
  /** Index (in the fetched rows) of the key the next page starts after; null: the relation has no more rows. */
  readonly nextKeyIndex: number | null;
}

/** `ranks`: the fetched rows' dense ranks in order (non-decreasing); `limit`: the rows a page keeps (n). */
export function splitPage(ranks: readonly string[], limit: number): PageSplit {
  if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`a page keeps at least one row, got ${limit}`);
  if (ranks.length <= limit) return { keep: ranks.length, fetchTailGroup: false, nextKeyIndex: null };
  const last = ranks[limit - 1];
  if (ranks[limit] !== last) return { keep: limit, fetchTailGroup: false, nextKeyIndex: limit - 1 };
  let start = limit - 1;
  while (start > 0 && ranks[start - 1] === last) start -= 1;
  return { keep: start, fetchTailGroup: true, nextKeyIndex: limit - 1 };
}

/** Whether kept row `i` is the last of its key (the ranks of the kept rows only). */
export function endsGroup(ranks: readonly string[], keep: number, i: number): boolean {
  return i === keep - 1 || ranks[i + 1] !== ranks[i];
}
