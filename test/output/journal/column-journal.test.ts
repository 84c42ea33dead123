/**
 * The column union kept under .state/ across crashes: a resume knows every column of the rows written
 * before it, and never one seen only in a row that did not reach results.ndjson (results.ndjson is the truth).
 */
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RowSet } from '../../../src/output/journal/bitset.js';
import { ColumnJournal, scanResultColumns } from '../../../src/output/journal/column-journal.js';
import { ColumnUnion, TYPE, typeBit } from '../../../src/output/journal/columns.js';
import { tempDir } from '../../helpers/temp.js';

const rows = (...n: number[]) => {
  const s = new RowSet();
  for (const r of n) s.add(r);
  return s;
};
const line = (row: number, fields: Record<string, unknown>) =>
  `${JSON.stringify({ row, key: `k${row}`, stages: { s: fields } })}\n`;
const entries = (u: ColumnUnion) => [...u.entries()].sort((a, b) => a.field.localeCompare(b.field));

describe('column union', () => {
  it.each([
    [true, TYPE.bool],
    [0, TYPE.int],
    [-3, TYPE.int],
    [1.5, TYPE.float],
    [2 ** 53, TYPE.float],
    [Number.NaN, 0],
    ['', TYPE.string],
    [[], TYPE.array],
    [{}, TYPE.object],
    [null, 0],
    [undefined, 0],
  ])('typeBit(%j) = %i', (v, bit) => {
    expect(typeBit(v)).toBe(bit);
  });

  it('reports only what is new or wider; known columns first, then the others sorted, as results.csv', () => {
    const u = new ColumnUnion();
    expect(u.observe({ s: { b: 1, a: null } })).toEqual([
      { stage: 's', field: 'b', types: TYPE.int },
      { stage: 's', field: 'a', types: 0 },
    ]);
    expect(u.observe({ s: { b: 2, a: null } })).toBeUndefined();
    expect(u.observe({ s: { b: 2.5, skip: undefined } })).toEqual([
      { stage: 's', field: 'b', types: TYPE.int | TYPE.float },
    ]);
    expect(
      u
        .columns([
          { id: 's', known: ['z', 'b'] },
          { id: 'gone', known: [] },
        ])
        .map((c) => c.name),
    ).toEqual(['s.z', 's.b', 's.a']);
  });
});

describe('.state/columns.ndjson', () => {
  it('a resume reads the journal: the union of every row written, without reading results.ndjson', async () => {
    const dir = tempDir('bre-cols-');
    const path = join(dir, 'columns.ndjson');
    const results = join(dir, 'results.ndjson');
    let j = await ColumnJournal.open(path, results, rows());
    j.observe(1, { s: { a: 1 } });
    j.observe(2, { s: { a: 1, only_in_2: 'x' } });
    j.observe(3, { s: { a: 1.5 } });
    j.close();
    writeFileSync(results, line(1, { a: 1 }) + line(2, { a: 1, only_in_2: 'x' }) + line(3, { a: 1.5 }));
    j = await ColumnJournal.open(path, results, rows(1, 2, 3));
    expect(j.rescanned).toBe(false);
    expect(entries(j.union)).toEqual(entries(await scanResultColumns(results)));
    expect(entries(j.union).map((e) => e.field)).toContain('only_in_2');
    j.close();
  });

  it('a column journalled for a row that never reached results (killed before its line) is dropped: the union is read from results.ndjson', async () => {
    const dir = tempDir('bre-cols-');
    const path = join(dir, 'columns.ndjson');
    const results = join(dir, 'results.ndjson');
    const j = await ColumnJournal.open(path, results, rows());
    j.observe(1, { s: { a: 1 } });
    j.observe(2, { s: { a: 1, torn: true } });
    j.close();
    writeFileSync(results, line(1, { a: 1 })); // row 2's line was cut off by the crash
    const again = await ColumnJournal.open(path, results, rows(1));
    expect(again.rescanned).toBe(true);
    expect(entries(again.union)).toEqual([{ stage: 's', field: 'a', types: TYPE.int }]);
    again.close();
    // The journal was rewritten from results.ndjson: the next open trusts it again.
    const third = await ColumnJournal.open(path, results, rows(1));
    expect(third.rescanned).toBe(false);
    third.close();
  });

  it('a folder of an older build (no journal) and a torn journal line are both repaired from results.ndjson', async () => {
    const dir = tempDir('bre-cols-');
    const path = join(dir, 'columns.ndjson');
    const results = join(dir, 'results.ndjson');
    writeFileSync(results, line(1, { a: 'x' }) + line(2, { b: [1] }));
    let j = await ColumnJournal.open(path, results, rows(1, 2));
    expect(j.rescanned).toBe(true);
    expect(entries(j.union)).toEqual([
      { stage: 's', field: 'a', types: TYPE.string },
      { stage: 's', field: 'b', types: TYPE.array },
    ]);
    j.close();
    appendFileSync(path, '{"row":2,"stage":"s","fi');
    j = await ColumnJournal.open(path, results, rows(1, 2));
    expect(j.rescanned).toBe(false);
    expect(readFileSync(path, 'utf8').endsWith('}\n')).toBe(true);
    expect(entries(j.union)).toHaveLength(2);
    j.close();
    rmSync(path);
    expect(existsSync(path)).toBe(false);
  });
});
