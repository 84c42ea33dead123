/**
 * Which of the spooled chunks the end of a run uses as they are, pure. A chunk (./spool.ts) holds
 * a row group and CSV records of rows in row order, from its first row to its last. The results files list
 * every row once, in row order, so a chunk can be copied whole only when no other line of the folder has a
 * row inside its range: none of the journal's part read again (rows of earlier sessions, the first rows of
 * this one, segments whose columns are not the final ones) and no other chunk's range. Those chunks are
 * *clean*; a *dirty* one (where a resumed run's rows meet the rows redone after the stop, the few hundred in
 * flight) has its lines read from the journal again and encoded with the journal's part.
 *
 * The part of the journal outside the segments used is read once, and its rows mark the chunks they fall
 * in as they are read (`markDirty`); then the dirty chunks' lines are read from their bytes
 * (`dirtyReads`). Every line of the journal is thus either in a clean chunk or encoded, once.
 */
import type { JournalRange } from './row-sort.js';
import type { SpooledChunk, SpooledSegment } from './spool.js';

export interface PlannedChunk {
  readonly chunk: SpooledChunk;
  /** Its segment's index: where its CSV records are, and whose byte range holds its lines. */
  readonly seg: number;
  dirty: boolean;
}

export interface EndPlan {
  /** The journal outside the segments used, split at `cut` (lines before it are visited). */
  readonly journal: readonly JournalRange[];
  /**
   * The byte ranges of the segments used; `visit`: a dirty chunk's lines read there are visited (an earlier
   * session's, counted by chunk: ./records.ts).
   */
  readonly used: readonly JournalRange[];
  /** Every chunk of the segments used, by first row. */
  readonly chunks: readonly PlannedChunk[];
  /**
   * Rows of a segment used whose lines are in the journal's part, before `before` (held back when the
   * columns changed): those lines are the chunk's own, not rows inside it.
   */
  readonly carried: ReadonlyMap<number, { readonly chunk: PlannedChunk; readonly before: number }>;
  /**
   * Lines of a segment used that lie past its bytes, by where they start (a killed session's rows still held
   * back when its last record was written: ./records.ts): the chunk's own lines.
   */
  readonly trailing: ReadonlyMap<number, { readonly chunk: PlannedChunk; readonly row: number }>;
}

/**
 * The segments used and the rest of the journal [0, size). `fits`: a segment's columns are the final ones
 * for every file written. A segment whose rows were held back from the one before (`carried`) and which is
 * not used makes every segment holding those lines' bytes unused too: else their lines would be in neither.
 */
export function planEnd(
  segments: readonly SpooledSegment[],
  size: number,
  cut: number,
  fits: (seg: SpooledSegment) => boolean,
): EndPlan {
  const use = segments.map((s) => s.rows > 0 && s.chunks.length > 0 && fits(s));
  for (let k = segments.length - 1; k >= 0; k -= 1) {
    const s = segments[k];
    if (use[k] || s.carriedFrom === undefined) continue;
    for (let j = 0; j < k; j += 1) if (segments[j].end > s.carriedFrom) use[j] = false;
  }
  const journal: JournalRange[] = [];
  // A journal range's lines before `cut` are visited (rows of earlier sessions), the rest not.
  const add = (start: number, end: number) => {
    const at = Math.min(Math.max(cut, start), end);
    if (at > start) journal.push({ start, end: at, visit: true });
    if (end > at) journal.push({ start: at, end, visit: false });
  };
  const used: JournalRange[] = [];
  const chunks: PlannedChunk[] = [];
  const carried = new Map<number, { chunk: PlannedChunk; before: number }>();
  const trailing = new Map<number, { chunk: PlannedChunk; row: number }>();
  let pos = 0;
  segments.forEach((s, k) => {
    if (!use[k]) return;
    add(pos, s.start);
    used.push({ start: s.start, end: s.end, visit: s.chunkCounts === true });
    pos = s.end;
    const own = s.chunks.map((chunk) => ({ chunk, seg: k, dirty: false }));
    chunks.push(...own);
    for (const row of s.carried ?? []) {
      const chunk = holding(own, row);
      if (chunk) carried.set(row, { chunk, before: s.start });
    }
    const t = s.trailing ?? [];
    for (let i = 0; i < t.length; i += 2) {
      const chunk = holding(own, t[i]);
      if (chunk) trailing.set(t[i + 1], { chunk, row: t[i] });
    }
  });
  add(pos, size);
  chunks.sort((a, b) => a.chunk.firstRow - b.chunk.firstRow);
  markOverlaps(chunks);
  return { journal, used, chunks, carried, trailing };
}

/** Chunks whose ranges meet (a row later than the reorder buffer, two sessions' segments) are dirty. */
function markOverlaps(byFirst: readonly PlannedChunk[]): void {
  let reach: PlannedChunk | undefined;
  for (const c of byFirst) {
    if (reach && c.chunk.firstRow <= reach.chunk.lastRow) {
      c.dirty = true;
      // Any earlier chunk that reaches this one also reaches the one reaching furthest: marked already.
      reach.dirty = true;
    }
    if (!reach || c.chunk.lastRow > reach.chunk.lastRow) reach = c;
  }
}

/** The chunk whose range holds `row`, among chunks by first row (any, when dirty ones overlap). */
export function holding(byFirst: readonly PlannedChunk[], row: number): PlannedChunk | undefined {
  let lo = 0;
  let hi = byFirst.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (byFirst[mid].chunk.firstRow <= row) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // A clean chunk holding `row` meets no other chunk, so it is the last one starting at or before it.
  return found >= 0 && row <= byFirst[found].chunk.lastRow ? byFirst[found] : undefined;
}

/**
 * A line of the journal's part, read from `range` (starting at byte `at`): whether it is a carried or trailing
 * row of a chunk (the chunk's own line, kept aside: encoded only if that chunk turns out dirty), or else marks
 * the chunk it falls in dirty.
 */
export function markDirty(plan: EndPlan, row: number, range: JournalRange, at?: number): PlannedChunk | undefined {
  const own = plan.carried.get(row);
  if (own && range.end <= own.before) return own.chunk;
  const past = at === undefined ? undefined : plan.trailing.get(at);
  if (past?.row === row) return past.chunk;
  const c = holding(plan.chunks, row);
  if (c) c.dirty = true;
  return undefined;
}

export interface DirtyReads {
  /** Bytes of the segments used that hold the dirty chunks' lines, in order, disjoint. */
  readonly ranges: readonly JournalRange[];
  /** The dirty chunks' row ranges, merged, in order: a line read there is encoded if its row is in one. */
  readonly rows: readonly (readonly [number, number])[];
}

/** What to read again, once the journal's part has marked the chunks. */
export function dirtyReads(plan: EndPlan): DirtyReads {
  const dirty = plan.chunks.filter((c) => c.dirty);
  const bytes = mergeIntervals(
    dirty.map((c) => [c.chunk.from, c.chunk.to] as [number, number]),
    0,
  );
  const ranges: JournalRange[] = [];
  // Only the segments' bytes: the journal's part is read already (a carried line is there).
  for (const [a, b] of bytes)
    for (const u of plan.used) {
      const start = Math.max(a, u.start);
      const end = Math.min(b, u.end);
      if (end > start) ranges.push({ start, end, visit: u.visit });
    }
  ranges.sort((x, y) => x.start - y.start);
  const rows = mergeIntervals(
    dirty.map((c) => [c.chunk.firstRow, c.chunk.lastRow] as [number, number]),
    1,
  );
  return { ranges, rows };
}

/** Intervals sorted and merged where they meet (`gap`: 1 joins [a, b] and [b + 1, c] of integers). */
export function mergeIntervals(list: readonly (readonly [number, number])[], gap: number): [number, number][] {
  const sorted = [...list].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1] + gap) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Whether `row` is in one of `intervals` (sorted, disjoint, inclusive). */
export function inIntervals(intervals: readonly (readonly [number, number])[], row: number): boolean {
  let lo = 0;
  let hi = intervals.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (row < intervals[mid][0]) hi = mid - 1;
    else if (row > intervals[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}
