/**
 * joinBuckets visits a bucket's lines in row order, whatever order the journals hold them in (answers finish
 * out of order): the figures built while visiting (the bootstrap's units, the weighted sums) are then the same
 * for the same rows however the runs went. docs/backtesting.md's figures, checked against the commands by
 * test/docs/figures.test.ts, once changed with a busy machine.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TextSink } from '../src/files.js';
import { joinBuckets } from '../src/join.js';

const lineOf = (row: number, key: string | null) => JSON.stringify({ row, key, stages: { wf: { decision: 'A' } } });

/** Joins one bucket of A and one of B, each written in the order given; what was visited, and what was written. */
async function join1(
  a: readonly (readonly [number, string | null])[],
  b: readonly (readonly [number, string | null])[],
) {
  const dir = mkdtempSync(join(tmpdir(), 'bre-join-order-'));
  const write = (name: string, lines: readonly (readonly [number, string | null])[]) => {
    const path = join(dir, name);
    writeFileSync(path, lines.map(([row, key]) => `${lineOf(row, key)}\n`).join(''));
    return path;
  };
  const visited: string[] = [];
  const out = new TextSink(join(dir, 'out.csv'));
  await joinBuckets({
    aPaths: [write('a', a)],
    bPaths: [write('b', b)],
    visit: (j) => {
      const v = `${j.match}:${j.a?.row ?? '-'}/${j.b?.row ?? '-'}`;
      visited.push(v);
      return `${v}\n`;
    },
    out,
    listCap: 10,
  });
  out.close();
  return { visited, written: readFileSync(join(dir, 'out.csv'), 'utf8').trim().split('\n') };
}

const rows: readonly (readonly [number, string | null])[] = [
  [1, 'K1'],
  [2, 'K2'],
  [3, 'K3'],
  [4, null],
  [5, 'K5'],
];

describe('joinBuckets: the order lines are visited in', () => {
  it.each([
    ['in row order', [0, 1, 2, 3, 4], [0, 1, 2, 3]],
    ['A reversed', [4, 3, 2, 1, 0], [0, 1, 2, 3]],
    ['both shuffled', [2, 0, 4, 1, 3], [3, 1, 0, 2]],
  ])('%s: visited and written in A row order, lines only in B last', async (_n, orderA, orderB) => {
    // B has rows 1, 2, 3 under the same keys and row 9 under a key A lacks.
    const b: (readonly [number, string | null])[] = [
      [1, 'K1'],
      [2, 'K2'],
      [3, 'K3'],
      [9, 'K9'],
    ];
    const { visited, written } = await join1(
      orderA.map((i) => rows[i]),
      orderB.map((i) => b[i]),
    );
    const want = ['matched:1/1', 'matched:2/2', 'matched:3/3', 'no_key:4/-', 'only_a:5/-', 'only_b:-/9'];
    expect(visited).toEqual(want);
    expect(written).toEqual(want);
  });
});
