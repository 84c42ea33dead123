/**
 * ResultSpool.release: the rows held below the run's floor (src/pipeline/row-floor.ts) are written at once, in
 * row order, rather than after thousands of later ones; the rows at or above it stay held. A floor that was
 * wrong (a line below it arrives later) costs a segment, never a row.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColumnUnion, type StageColumns } from '../../../src/output/journal/columns.js';
import { ResultSpool, type ChunkRecorder, type ResultLine } from '../../../src/output/spool/spool.js';
import { tempDir } from '../../helpers/temp.js';
import { mkdirSync } from 'node:fs';

const STAGES: StageColumns[] = [{ id: 'wf', known: ['decision'] }];
const line = (row: number): ResultLine => ({ row, key: `K${row}`, stages: { wf: { decision: 'Approve' } } });

/** A spool of 2-row chunks whose recorder lists each chunk's rows as it is written. */
function spool() {
  const state = join(tempDir('bre-release-'), '.state');
  mkdirSync(state);
  const chunks: [number, number][] = [];
  const recorder: ChunkRecorder = {
    open: () => undefined,
    chunk: (_seg, c) => chunks.push([c.firstRow, c.lastRow]),
    close: () => undefined,
    end: () => undefined,
  };
  const s = new ResultSpool({
    stateDir: state,
    csv: true,
    parquet: false,
    stages: STAGES,
    union: new ColumnUnion(),
    recorder,
    chunkRows: 2,
  });
  let at = 0;
  const add = (...rows: number[]) => {
    for (const r of rows) {
      s.add(line(r), at, at + 10);
      at += 10;
    }
  };
  return {
    s,
    chunks,
    add,
    /** The floor told with the file's length as it is now (every line added so far before it). */
    release: (floor: number) => s.release(floor, at),
    /** Where the next line starts. */
    at: () => at,
    end: () => s.finish(at),
  };
}

describe('ResultSpool.release', () => {
  it.each([
    ['no floor: every row held (4,096 by default)', [[2, 1, 4, 3, 0]], []],
    ['a floor writes the rows below it, in row order', [[2, 1, 4, 3, 3]], [[1, 2]]],
    ['the rows at the floor and above stay held', [[2, 1, 4, 3, 4]], [[1, 2]]],
    [
      'a floor past every row: all written',
      [[2, 1, 4, 3, 5]],
      [
        [1, 2],
        [3, 4],
      ],
    ],
    [
      'floors one after another',
      [
        [2, 1, 3],
        [4, 3, 6, 5, 7],
      ],
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
    ],
  ] as const)('%s', (_n, steps, written) => {
    const sp = spool();
    for (const step of steps) {
      sp.add(...step.slice(0, -1));
      sp.release(step.at(-1)!);
    }
    expect(sp.chunks).toEqual(written);
  });

  it('every row once, in one segment, when the floor was true', () => {
    const sp = spool();
    sp.add(2, 1);
    sp.release(3);
    sp.add(3, 5, 4);
    sp.release(5);
    sp.add(6);
    const { segments } = sp.end();
    expect(segments.map((s) => [s.rows, s.firstRow, s.lastRow])).toEqual([[6, 1, 6]]);
  });

  it("only lines before the floor's length: a row below the floor that started after it (a job's chunk) waits", () => {
    const sp = spool();
    sp.add(2, 1);
    const at = sp.at();
    // Row 0 starts after the floor of 3 was taken (the run turns its floor off then): its line is past `at`.
    sp.add(0);
    sp.s.release(3, at);
    expect(sp.chunks).toEqual([]);
    sp.s.release(3, sp.at());
    expect(sp.chunks).toEqual([[0, 1]]);
  });

  it('a line below a floor already passed (the floor was wrong) starts a new segment; no row is lost', () => {
    const sp = spool();
    sp.add(3, 4);
    sp.release(5);
    sp.add(2, 6);
    const { segments } = sp.end();
    expect(segments.map((s) => [s.rows, s.firstRow, s.lastRow])).toEqual([
      [2, 3, 4],
      [2, 2, 6],
    ]);
  });
});
