/** sinkValue: a journal value as a sink column's parameter, the same rules as results.parquet's (table-driven). */
import { describe, expect, it } from 'vitest';
import { sinkValue, sqlTimestamp } from '../../../src/output/sink/values.js';
import type { ColumnKind } from '@bre-batch/core/types';

const CASES: readonly [ColumnKind, unknown, unknown][] = [
  // Nothing is null in every kind.
  ...(['boolean', 'int64', 'double', 'string', 'json', 'timestamp_local_ms', 'date'] as const).flatMap(
    (k): [ColumnKind, unknown, unknown][] => [
      [k, null, null],
      [k, undefined, null],
    ],
  ),
  ['boolean', true, true],
  ['boolean', false, false],
  ['boolean', 'true', null],
  ['boolean', 1, null],
  ['int64', 42, 42],
  ['int64', -7, -7],
  ['int64', 0, 0],
  ['int64', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  // Past 2^53 an integer is not exact: not written as one.
  ['int64', 2 ** 53, null],
  ['int64', -(2 ** 53), null],
  ['int64', 1.5, null],
  ['int64', Number.NaN, null],
  ['int64', '42', null],
  ['double', 0.1, 0.1],
  ['double', 3, 3],
  ['double', -1e-300, -1e-300],
  ['double', Number.NaN, null],
  ['double', Number.POSITIVE_INFINITY, null],
  ['double', Number.NEGATIVE_INFINITY, null],
  ['double', '0.1', null],
  ['string', 'Zoë 😀', 'Zoë 😀'],
  ['string', '', ''],
  // A mixed column is text: anything that is not text goes in as its JSON.
  ['string', 12, '12'],
  ['string', 0.5, '0.5'],
  ['string', false, 'false'],
  ['string', { a: 1, b: [true, null] }, '{"a":1,"b":[true,null]}'],
  ['string', [1, 'x'], '[1,"x"]'],
  // JSON as its text (the driver would make an array a SQL array).
  ['json', { a: { b: [1, 2] } }, '{"a":{"b":[1,2]}}'],
  ['json', [1, 2], '[1,2]'],
  ['json', [], '[]'],
  ['json', 'x', '"x"'],
  ['timestamp_local_ms', '2024-03-01T10:20:30.125', '2024-03-01 10:20:30.125'],
  ['timestamp_local_ms', '2024-03-01 10:20:30', '2024-03-01 10:20:30.000'],
  ['timestamp_local_ms', '2024-03-01T10:20:30.123456789', '2024-03-01 10:20:30.123'],
  // The wall clock as written: an offset is not applied (it has a column of its own).
  ['timestamp_local_ms', '2024-03-01T10:20:30+05:30', '2024-03-01 10:20:30.000'],
  ['timestamp_local_ms', '2024-03-01T23:59:59.999Z', '2024-03-01 23:59:59.999'],
  ['timestamp_local_ms', '2024-03-01', '2024-03-01 00:00:00.000'],
  ['timestamp_local_ms', '01/03/2024', null],
  ['timestamp_local_ms', 1709288430000, null],
  ['date', '2024-02-29', '2024-02-29'],
  ['date', '2024-02-29T23:59:59.999', '2024-02-29'],
  ['date', '1999-12-31T00:00:00+14:00', '1999-12-31'],
  ['date', 'yesterday', null],
  ['date', 20240229, null],
];

describe('sinkValue', () => {
  it.each(CASES)('%s of %j is %j', (kind, value, expected) => {
    expect(sinkValue(kind, value)).toStrictEqual(expected);
  });
});

describe('sqlTimestamp', () => {
  it.each([
    [0, '1970-01-01 00:00:00.000'],
    [Date.UTC(2024, 1, 29, 7, 5, 9, 42), '2024-02-29 07:05:09.042'],
    [Date.UTC(9999, 11, 31, 23, 59, 59, 999), '9999-12-31 23:59:59.999'],
  ])('%d is %s (UTC wall clock)', (ms, text) => {
    expect(sqlTimestamp(ms)).toBe(text);
  });
});
