/**
 * RowShape: a results line's values in file order and its CSV record. The record is built as one string (no
 * array of fields a row), so it is checked against csv-stringify itself over the same values made
 * spreadsheet-safe, for any values and run ids (the shape keeps a session's run id from row to row).
 */
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { excelSafe } from '../../../src/output/files/excel.js';
import { TYPE } from '../../../src/output/journal/columns.js';
import { RowShape, resultHeader, type ResultLine } from '../../../src/output/spool/spool.js';

const columns = [
  { name: 'w.decision', stage: 'w', field: 'decision', types: TYPE.string },
  { name: 'w.score', stage: 'w', field: 'score', types: TYPE.int | TYPE.float },
  { name: 'w.rules', stage: 'w', field: 'rules', types: TYPE.array },
];

/** What csv-stringify writes for the same values, each made safe for spreadsheets first. */
const expected = (values: readonly unknown[]) =>
  stringify([values.map((v, i) => (i === 0 ? String(v) : excelSafe(v)))]);

const text = fc.oneof(
  fc.string(),
  fc.constantFrom('', ',', '"', '\n', '=SUM(A1)', '-1', '@x', 'naïve 😀'),
  fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', '=', 'é') }),
);
const line = fc.record({
  row: fc.nat(),
  key: fc.oneof(text, fc.constant(null)),
  run_id: fc.oneof(fc.constantFrom('r-1', 'r-2', '=r', 'a,b'), fc.constant(undefined)),
  run_session: fc.oneof(fc.nat(9), fc.constant(undefined)),
  decision: fc.oneof(text, fc.constant(undefined)),
  score: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constant(null)),
  rules: fc.oneof(fc.array(text, { maxLength: 3 }), fc.constant(undefined)),
});

type Line = typeof line extends fc.Arbitrary<infer T> ? T : never;

const asLine = (l: Line): ResultLine => ({
  row: l.row,
  key: l.key,
  ...(l.run_id === undefined ? {} : { run_id: l.run_id }),
  ...(l.run_session === undefined ? {} : { run_session: l.run_session }),
  stages: { w: { decision: l.decision, score: l.score, rules: l.rules } },
});

describe('RowShape', () => {
  it('puts the run id and session last, after the stages, as the header says', () => {
    const shape = new RowShape(columns, false);
    const values = shape.values({ row: 7, key: 'K7', run_id: 'r-1', run_session: 2, stages: { w: { decision: 'A' } } });
    expect(resultHeader(columns, false)).toEqual([
      'row',
      'key',
      'w.decision',
      'w.score',
      'w.rules',
      'run_id',
      'run_session',
    ]);
    expect(values).toEqual([7, 'K7', 'A', undefined, undefined, 'r-1', 2]);
    expect(shape.csv(values)).toBe('7,K7,A,,,r-1,2\n');
  });

  it('writes what csv-stringify writes for the same values, row after row (a run id kept from row to row)', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), fc.boolean(), (lines, sampled) => {
        const shape = new RowShape(columns, sampled);
        for (const l of lines) {
          const values = shape.values(asLine(l));
          expect(shape.csv(values)).toBe(expected(values));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a run id that changes from one row to the next: each row writes its own', () => {
    const shape = new RowShape(columns, false);
    const ids = ['r-1', 'r-1', 'r-2', '=r', 'r-1'];
    const records = ids.map((id, i) => shape.csv(shape.values({ row: i, key: 'k', run_id: id, stages: {} })));
    expect(records).toEqual(['0,k,,,,r-1,\n', '1,k,,,,r-1,\n', '2,k,,,,r-2,\n', "3,k,,,,'=r,\n", '4,k,,,,r-1,\n']);
  });
});
