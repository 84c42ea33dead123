import { describe, expect, it } from 'vitest';
import {
  addMonths,
  formatAaDateTime,
  parseRangeDate,
  rangeExceedsMonths,
  type WallClock,
} from '../../src/services/account/aa-dates.js';
import { isUuid, splitHandles, uniqueHandles } from '../../src/services/account/consent.js';

function toApi(raw: unknown, bound: 'from' | 'to' = 'from'): string | null {
  const p = parseRangeDate(raw, bound);
  return p.ok ? formatAaDateTime(p.wall) : null;
}

describe('AA date conversion (MM/DD/YYYY HH:MM:SS AM/PM, 12-hour clock)', () => {
  it.each([
    ['midnight', '2024-01-31T00:00:00', '01/31/2024 12:00:00 AM'],
    ['just after midnight', '2024-01-31T00:05:09', '01/31/2024 12:05:09 AM'],
    ['morning', '2024-01-31T09:30:00', '01/31/2024 09:30:00 AM'],
    ['last second before noon', '2024-01-31T11:59:59', '01/31/2024 11:59:59 AM'],
    ['noon', '2024-01-31T12:00:00', '01/31/2024 12:00:00 PM'],
    ['12:30 is PM', '2024-01-31T12:30:00', '01/31/2024 12:30:00 PM'],
    ['1 PM', '2024-01-31T13:00:00', '01/31/2024 01:00:00 PM'],
    ['evening', '2024-01-31T23:59:59', '01/31/2024 11:59:59 PM'],
    ['no seconds', '2024-01-31T18:45', '01/31/2024 06:45:00 PM'],
    ['space separator, fraction', '2024-01-31 18:45:10.250', '01/31/2024 06:45:10 PM'],
    ['offset dropped, wall clock kept', '2024-01-31T18:45:00+05:30', '01/31/2024 06:45:00 PM'],
    ['Z dropped', '2024-01-31T00:00:00Z', '01/31/2024 12:00:00 AM'],
    ['date only (from) = start of day', '2024-02-29', '02/29/2024 12:00:00 AM'],
    ['API form kept', '01/31/2024 06:45:00 PM', '01/31/2024 06:45:00 PM'],
    ['API form 12 AM', '01/31/2024 12:00:00 AM', '01/31/2024 12:00:00 AM'],
    ['API form unpadded, lower case', '1/5/2024 7:05:00 pm', '01/05/2024 07:05:00 PM'],
    ['surrounding spaces', ' 2024-01-31 ', '01/31/2024 12:00:00 AM'],
  ])('%s: %s -> %s', (_name, input, expected) => {
    expect(toApi(input)).toBe(expected);
  });

  it('a date alone as the end of the range means its last second', () => {
    expect(toApi('2024-06-30', 'to')).toBe('06/30/2024 11:59:59 PM');
    expect(toApi('2024-06-30T00:00:00', 'to')).toBe('06/30/2024 12:00:00 AM');
  });

  it.each([
    ['not a leap year', '2023-02-29'],
    ['month 13', '2024-13-01'],
    ['hour 24', '2024-01-01T24:00:00'],
    ['minute 60', '2024-01-01T10:60:00'],
    ['API hour 0', '01/31/2024 00:30:00 AM'],
    ['API hour 13', '01/31/2024 13:30:00 PM'],
    ['API without AM/PM', '01/31/2024 10:30:00'],
    ['API day 32', '01/32/2024 10:30:00 AM'],
    ['words', 'yesterday'],
    ['DD-MM-YYYY', '31-01-2024'],
    ['empty', ''],
    ['a number', 20240131],
    ['null', null],
  ])('rejects %s (%j)', (_name, input) => {
    expect(parseRangeDate(input, 'from')).toMatchObject({ ok: false });
  });

  const w = (year: number, month: number, day: number, hour = 0): WallClock => ({
    year,
    month,
    day,
    hour,
    minute: 0,
    second: 0,
  });

  it.each([
    [w(2024, 1, 31), 1, w(2024, 2, 29)],
    [w(2023, 8, 31), 6, w(2024, 2, 29)],
    [w(2024, 10, 15), 6, w(2025, 4, 15)],
    [w(2024, 1, 1), 12, w(2025, 1, 1)],
  ])('addMonths(%j, %i)', (from, months, expected) => {
    expect(addMonths(from, months)).toEqual(expected);
  });

  it.each([
    [w(2024, 1, 1), w(2024, 6, 30, 23), false],
    [w(2024, 1, 1), w(2024, 7, 1, 0), false],
    [w(2024, 1, 1), w(2024, 7, 1, 1), true],
    [w(2024, 1, 1), w(2025, 1, 1), true],
  ])('rangeExceedsMonths(%j, %j, 6) = %s', (from, to, expected) => {
    expect(rangeExceedsMonths(from, to, 6)).toBe(expected);
  });
});

describe('consent handles', () => {
  const A = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
  const B = '9b2d3c1e-0f4a-4b7c-8d6e-1a2b3c4d5e6f';

  it.each([
    ['empty string', '', []],
    ['one', A, [A]],
    ['semicolons', `${A};${B}`, [A, B]],
    ['pipes and spaces', ` ${A} | ${B} `, [A, B]],
    ['commas', `${A},${B}`, [A, B]],
    ['JSON array text', JSON.stringify([A, B]), [A, B]],
    ['array (NDJSON)', [A, B], [A, B]],
    ['trailing separator', `${A};`, [A]],
    ['null', null, []],
  ])('splits %s', (_name, input, expected) => {
    expect(splitHandles(input)).toEqual({ ok: true, handles: expected });
  });

  it.each([
    ['a number', 42],
    ['array with a number', [A, 7]],
    ['broken JSON', `["${A}"`],
    ['unterminated array', '[1'],
    ['object', { a: A }],
  ])('rejects %s', (_name, input) => {
    expect(splitHandles(input)).toMatchObject({ ok: false });
  });

  it.each([
    [A, true],
    [A.toUpperCase(), true],
    ['3fa85f64-5717-4562-b3fc-2c963f66afa', false],
    ['not-a-uuid', false],
    [`{${A}}`, false],
  ])('isUuid(%s) = %s', (input, expected) => {
    expect(isUuid(input)).toBe(expected);
  });

  it('drops repeated handles, case-insensitively, keeping first-seen order', () => {
    expect(uniqueHandles([B, A, B.toUpperCase(), A])).toEqual([B, A]);
  });
});
