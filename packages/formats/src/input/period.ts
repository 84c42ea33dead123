/**
 * The period of a row: a date of an input column, grouped by calendar month (default), ISO 8601 week or
 * quarter, for `compare --period` (packages/backtest/src/) and `run --stratify-by COL:month` (src/sample/); it lives
 * here, below both, so that the two group a date the same way. Labels sort chronologically as text ("2025-01" < "2025-02", "2025-W09" < "2025-W10",
 * "2025-Q1" < "2025-Q2"). A value that is not a date gets no period: its key is counted under "(missing)",
 * never dropped and never given a guessed date.
 *
 * Accepted: year first, as `bre-batch run` inputs write them: 2025-03-07, 2025/03/07, 2025-3-7, and a time after
 * the date (2025-03-07T10:15:00Z, 2025-03-07 10:15). The date is taken as written; a time zone is not applied
 * (an application made on the 31st stays in that month). Day-first and month-first dates (07/03/2025) are
 * ambiguous and are not guessed.
 */

export const PERIOD_UNITS = ['month', 'week', 'quarter'] as const;
export type PeriodUnit = (typeof PERIOD_UNITS)[number];

export const MISSING_PERIOD = '(missing)';

interface CalendarDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const DATE = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:$|[T ])/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function parseDate(value: unknown): CalendarDate | null {
  if (typeof value !== 'string') return null;
  const m = DATE.exec(value.trim());
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** ISO 8601 week: weeks start on Monday; week 1 is the one with the year's first Thursday. */
function isoWeek(d: CalendarDate): { year: number; week: number } {
  const t = Date.UTC(d.year, d.month - 1, d.day);
  const dow = (new Date(t).getUTCDay() + 6) % 7; // Monday 0 .. Sunday 6
  const thursday = new Date(t + (3 - dow) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000)) + 1;
  return { year, week };
}

function periodLabel(d: CalendarDate, unit: PeriodUnit): string {
  if (unit === 'month') return `${d.year}-${pad(d.month)}`;
  if (unit === 'quarter') return `${d.year}-Q${Math.ceil(d.month / 3)}`;
  const w = isoWeek(d);
  return `${w.year}-W${pad(w.week)}`;
}

/** The period of a raw input value, or null when it is not a date. */
export function periodOf(value: unknown, unit: PeriodUnit): string | null {
  const d = parseDate(value);
  return d ? periodLabel(d, unit) : null;
}

/** Chronological order, "(missing)" last. */
export function comparePeriods(x: string, y: string): number {
  if (x === y) return 0;
  if (x === MISSING_PERIOD) return 1;
  if (y === MISSING_PERIOD) return -1;
  return x < y ? -1 : 1;
}
