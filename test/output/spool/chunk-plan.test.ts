/**
 * The range logic of the end of a run (issue 31, src/output/spool/chunk-plan.ts): which spooled chunks are
 * used as they are, which are read from the journal again, and which bytes of the journal are read.
 */
import { describe, expect, it } from 'vitest';
import {
  dirtyReads,
  holding,
  inIntervals,
  markDirty,
  mergeIntervals,
  planEnd,
  type PlannedChunk,
} from '../../../src/output/spool/chunk-plan.js';
import type { JournalRange } from '../../../src/output/spool/row-sort.js';
import type { SpooledSegment } from '../../../src/output/spool/spool.js';

/** A chunk: rows [first, last], its lines in journal bytes [from, to). */
type C = readonly [first: number, last: number, from: number, to: number];

function seg(start: number, end: number, chunks: readonly C[], extra: Partial<SpooledSegment> = {}): SpooledSegment {
  return {
    start,
    end,
    rows: chunks.reduce((n, [a, b]) => n + b - a + 1, 0),
    names: 'n',
    kinds: 'k',
    chunks: chunks.map(([firstRow, lastRow, from, to]) => ({
      rows: lastRow - firstRow + 1,
      firstRow,
      lastRow,
      from,
      to,
      csvStart: 0,
      csvEnd: 0,
    })),
    parquet: true,
    ...extra,
  };
}

const all = () => true;
const ranges = (chunks: readonly PlannedChunk[]) => chunks.map((c) => [c.chunk.firstRow, c.chunk.lastRow]);
const dirty = (chunks: readonly PlannedChunk[]) => chunks.filter((c) => c.dirty).map((c) => c.chunk.firstRow);

describe('the end plan: segments used, the rest of the journal', () => {
  it.each([
    {
      what: 'one session whose spool started at once: nothing read from the journal',
      segments: [
        seg(0, 1000, [
          [1, 10, 0, 500],
          [11, 20, 480, 1000],
        ]),
      ],
      size: 1000,
      cut: 0,
      journal: [],
    },
    {
      what: 'the first lines before the spool started, and lines after its end, read (this session: not visited)',
      segments: [seg(300, 900, [[5, 20, 300, 900]])],
      size: 1000,
      cut: 0,
      journal: [
        { start: 0, end: 300, visit: false },
        { start: 900, end: 1000, visit: false },
      ],
    },
    {
      what: 'a resumed run: the earlier session visited, this session before its spool not',
      segments: [seg(700, 1000, [[60, 90, 700, 1000]])],
      size: 1000,
      cut: 500,
      journal: [
        { start: 0, end: 500, visit: true },
        { start: 500, end: 700, visit: false },
      ],
    },
    {
      what: 'a segment without the final columns is read from the journal, its chunks not listed',
      segments: [seg(0, 400, [[1, 40, 0, 400]]), seg(400, 1000, [[41, 100, 400, 1000]])],
      fits: (s: SpooledSegment) => s.start > 0,
      size: 1000,
      cut: 0,
      journal: [{ start: 0, end: 400, visit: false }],
      chunks: [[41, 100]],
    },
    {
      what: 'an empty segment is not used',
      segments: [seg(0, 10, []), seg(10, 1000, [[1, 100, 10, 1000]])],
      size: 1000,
      cut: 0,
      journal: [{ start: 0, end: 10, visit: false }],
      chunks: [[1, 100]],
    },
    {
      what: 'rows carried into a segment not used: the segments holding their lines are not used either',
      segments: [
        seg(0, 300, [[1, 30, 0, 300]]),
        seg(300, 600, [[31, 60, 300, 600]]),
        seg(600, 1000, [[61, 100, 550, 1000]], { carried: [61, 62], carriedFrom: 550 }),
      ],
      fits: (s: SpooledSegment) => s.start < 600,
      size: 1000,
      cut: 0,
      journal: [{ start: 300, end: 1000, visit: false }],
      chunks: [[1, 30]],
    },
  ])('$what', ({ segments, size, cut, journal, chunks, fits }) => {
    const plan = planEnd(segments, size, cut, fits ?? all);
    expect(plan.journal).toEqual(journal);
    if (chunks) expect(ranges(plan.chunks)).toEqual(chunks);
  });

  it('lists the chunks by first row, and those whose ranges meet (a very late row, a second segment) dirty', () => {
    const plan = planEnd(
      [
        seg(0, 500, [
          [1, 10, 0, 100],
          [11, 20, 100, 200],
          [21, 30, 200, 300],
          [31, 40, 300, 500],
        ]),
        // A row 15 that came after row 40 had been written: a segment of its own, then the rest.
        seg(500, 520, [[15, 15, 500, 520]]),
        seg(520, 900, [[41, 50, 520, 900]]),
      ],
      900,
      0,
      all,
    );
    expect(ranges(plan.chunks)).toEqual([
      [1, 10],
      [11, 20],
      [15, 15],
      [21, 30],
      [31, 40],
      [41, 50],
    ]);
    expect(dirty(plan.chunks)).toEqual([11, 15]);
  });

  it('chunks that share a boundary row are dirty (a row twice: the journal decides)', () => {
    const plan = planEnd([seg(0, 100, [[1, 10, 0, 100]]), seg(100, 200, [[10, 20, 100, 200]])], 200, 0, all);
    expect(dirty(plan.chunks)).toEqual([1, 10]);
  });
});

describe('the journal part marks the chunks its rows fall in', () => {
  const earlier: JournalRange = { start: 0, end: 500, visit: true };

  it.each([
    { what: 'a row below every chunk', row: 3, dirty: [] },
    { what: 'a row between two chunks', row: 45, dirty: [] },
    { what: 'a row inside the first chunk (done again after the stop)', row: 42, dirty: [41] },
    { what: 'the first row of a chunk', row: 51, dirty: [51] },
    { what: 'the last row of a chunk', row: 60, dirty: [51] },
    { what: 'a row above every chunk', row: 1000, dirty: [] },
  ])('$what', ({ row, dirty: want }) => {
    const plan = planEnd(
      [
        seg(500, 1000, [
          [41, 44, 500, 600],
          [51, 60, 600, 1000],
        ]),
      ],
      1000,
      500,
      all,
    );
    expect(markDirty(plan, row, earlier)).toBeUndefined();
    expect(dirty(plan.chunks)).toEqual(want);
  });

  it("a row carried into a chunk, its line in the journal's part before the segment, is the chunk's own", () => {
    const plan = planEnd(
      [
        seg(0, 400, [[1, 37, 0, 400]], { names: 'old' }),
        seg(400, 1000, [[38, 100, 350, 1000]], { carried: [38, 39], carriedFrom: 350 }),
      ],
      1000,
      0,
      (s) => s.names !== 'old',
    );
    const before: JournalRange = { start: 0, end: 400, visit: false };
    expect(markDirty(plan, 39, before)?.chunk.firstRow).toBe(38);
    expect(dirty(plan.chunks)).toEqual([]);
    // The same row read after the segment's start is not its carried line: a row inside it.
    expect(markDirty(plan, 39, { start: 1000, end: 1200, visit: false })).toBeUndefined();
    expect(dirty(plan.chunks)).toEqual([38]);
  });
});

describe("the dirty chunks' lines read again", () => {
  it("reads the dirty chunks' bytes within the segments used, and keeps the rows of their ranges", () => {
    const plan = planEnd(
      [
        seg(0, 300, [[1, 30, 0, 300]], { names: 'old' }),
        seg(
          300,
          2000,
          [
            [25, 60, 250, 700],
            [61, 90, 650, 1200],
            [91, 120, 1200, 2000],
          ],
          {
            carried: [25, 26],
            carriedFrom: 250,
          },
        ),
      ],
      2000,
      0,
      (s) => s.names !== 'old',
    );
    for (const row of [27, 95]) markDirty(plan, row, { start: 0, end: 300, visit: false });
    // 27 is inside [25, 60]; 95 is inside [91, 120]: rows of the part read, not carried ones.
    expect(dirty(plan.chunks)).toEqual([25, 91]);
    const again = dirtyReads(plan);
    // [250, 700) clipped to the segment used (the carried lines before 300 are in the journal's part).
    expect(again.ranges).toEqual([
      { start: 300, end: 700, visit: false },
      { start: 1200, end: 2000, visit: false },
    ]);
    expect(again.rows).toEqual([
      [25, 60],
      [91, 120],
    ]);
  });

  it('nothing dirty: nothing read again', () => {
    const plan = planEnd([seg(0, 100, [[1, 10, 0, 100]])], 100, 0, all);
    expect(dirtyReads(plan)).toEqual({ ranges: [], rows: [] });
  });
});

describe('intervals', () => {
  it.each([
    { list: [], gap: 1, want: [] },
    { list: [[5, 9]], gap: 1, want: [[5, 9]] },
    {
      list: [
        [10, 12],
        [1, 3],
      ],
      gap: 1,
      want: [
        [1, 3],
        [10, 12],
      ],
    },
    {
      list: [
        [1, 3],
        [4, 6],
      ],
      gap: 1,
      want: [[1, 6]],
    },
    {
      list: [
        [1, 3],
        [4, 6],
      ],
      gap: 0,
      want: [
        [1, 3],
        [4, 6],
      ],
    },
    {
      list: [
        [0, 100],
        [100, 200],
      ],
      gap: 0,
      want: [[0, 200]],
    },
    {
      list: [
        [1, 10],
        [2, 3],
        [9, 15],
      ],
      gap: 1,
      want: [[1, 15]],
    },
  ] as { list: [number, number][]; gap: number; want: [number, number][] }[])(
    'merge $list (gap $gap) gives $want',
    ({ list, gap, want }) => {
      expect(mergeIntervals(list, gap)).toEqual(want);
    },
  );

  it.each([
    [0, false],
    [1, true],
    [3, true],
    [4, false],
    [10, true],
    [12, true],
    [13, false],
  ])('row %i in [1, 3] or [10, 12]: %s', (row, want) => {
    expect(
      inIntervals(
        [
          [1, 3],
          [10, 12],
        ],
        row,
      ),
    ).toBe(want);
  });

  it.each([
    [0, undefined],
    [1, 1],
    [10, 1],
    [11, undefined],
    [20, 20],
    [25, 20],
    [31, undefined],
  ])('row %i is held by the chunk starting at %s', (row, want) => {
    const plan = planEnd(
      [
        seg(0, 100, [
          [1, 10, 0, 50],
          [20, 30, 50, 100],
        ]),
      ],
      100,
      0,
      all,
    );
    expect(holding(plan.chunks, row)?.chunk.firstRow).toBe(want);
  });
});
