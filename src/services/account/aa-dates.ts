/**
 * Dates for AA fetch_data (spec 4.1): `datetimerangefrom` / `datetimerangeto` are strings in the form
 * `MM/DD/YYYY HH:MM:SS AM/PM` (12-hour clock). Users give ISO dates or datetimes; we also accept the API's
 * own form as is. The API form carries no time zone, so a time is sent as written (wall clock): an ISO
 * offset in the input is accepted and dropped rather than converted, which keeps "what you wrote is what
 * is sent" predictable (the spec does not say which zone the service assumes).
 */

/** A wall-clock date and time with no zone. Months 1-12. */
export interface WallClock {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

export type Bound = 'from' | 'to';

export type ParsedRangeDate =
  | { readonly ok: true; readonly wall: WallClock; readonly dateOnly: boolean }
  | { readonly ok: false; readonly expected: string };

const RANGE_DATE_EXPECTED =
  'an ISO date (YYYY-MM-DD), an ISO datetime (YYYY-MM-DDTHH:MM[:SS]) or MM/DD/YYYY HH:MM:SS AM/PM';

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const API_RE = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) ?(AM|PM)$/i;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function valid(w: WallClock): boolean {
  return (
    w.month >= 1 &&
    w.month <= 12 &&
    w.day >= 1 &&
    w.day <= daysInMonth(w.year, w.month) &&
    w.hour >= 0 &&
    w.hour <= 23 &&
    w.minute >= 0 &&
    w.minute <= 59 &&
    w.second >= 0 &&
    w.second <= 59
  );
}

/**
 * Parses a range bound. A date without a time means the start of that day for `from` and its last second
 * (23:59:59) for `to`, so `date_to=2024-06-30` includes 30 June.
 */
export function parseRangeDate(raw: unknown, bound: Bound): ParsedRangeDate {
  if (typeof raw !== 'string') return { ok: false, expected: RANGE_DATE_EXPECTED };
  const text = raw.trim();
  const iso = ISO_RE.exec(text);
  if (iso) {
    const dateOnly = iso[4] === undefined;
    const endOfDay = dateOnly && bound === 'to';
    const wall: WallClock = {
      year: Number(iso[1]),
      month: Number(iso[2]),
      day: Number(iso[3]),
      hour: dateOnly ? (endOfDay ? 23 : 0) : Number(iso[4]),
      minute: dateOnly ? (endOfDay ? 59 : 0) : Number(iso[5]),
      second: dateOnly ? (endOfDay ? 59 : 0) : Number(iso[6] ?? 0),
    };
    return valid(wall) ? { ok: true, wall, dateOnly } : { ok: false, expected: RANGE_DATE_EXPECTED };
  }
  const api = API_RE.exec(text);
  if (api) {
    const h12 = Number(api[4]);
    if (h12 < 1 || h12 > 12) return { ok: false, expected: RANGE_DATE_EXPECTED };
    const pm = api[7].toUpperCase() === 'PM';
    const wall: WallClock = {
      year: Number(api[3]),
      month: Number(api[1]),
      day: Number(api[2]),
      hour: (h12 % 12) + (pm ? 12 : 0),
      minute: Number(api[5]),
      second: Number(api[6]),
    };
    return valid(wall) ? { ok: true, wall, dateOnly: false } : { ok: false, expected: RANGE_DATE_EXPECTED };
  }
  return { ok: false, expected: RANGE_DATE_EXPECTED };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `MM/DD/YYYY HH:MM:SS AM/PM`: hour 0 is 12 AM, hour 12 is 12 PM, hour 13 is 01 PM. */
export function formatAaDateTime(w: WallClock): string {
  const h12 = w.hour % 12 === 0 ? 12 : w.hour % 12;
  const half = w.hour < 12 ? 'AM' : 'PM';
  return `${pad(w.month)}/${pad(w.day)}/${pad(w.year, 4)} ${pad(h12)}:${pad(w.minute)}:${pad(w.second)} ${half}`;
}

/** Milliseconds of the wall clock read as if it were UTC: only for ordering and distances. */
export function wallMillis(w: WallClock): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/** `w` plus `months` calendar months, the day clamped to the month's end (31 Aug + 6 months = 28/29 Feb). */
export function addMonths(w: WallClock, months: number): WallClock {
  const total = w.year * 12 + (w.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  return { ...w, year, month, day: Math.min(w.day, daysInMonth(year, month)) };
}

/** True when `to` lies more than `months` calendar months after `from` (spec 8: works well up to 6 months). */
export function rangeExceedsMonths(from: WallClock, to: WallClock, months: number): boolean {
  return wallMillis(to) > wallMillis(addMonths(from, months));
}
