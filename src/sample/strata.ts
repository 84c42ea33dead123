/**
 * The stratum of a row: the values of the --stratify-by columns, a date column grouped as `compare --period`
 * groups it (packages/formats/src/input/period.ts). A value that is missing (an empty cell, JSON null) or unreadable (a
 * date that is not one) is null: a stratum of its own, named `(missing)`, never dropped.
 */
import { getField, isAbsent } from '@bre-batch/formats/input/fields';
import { MISSING_PERIOD, periodOf } from '@bre-batch/formats/input/period';
import type { StratifyColumn } from '@bre-batch/formats/manifest';

/** How a missing value is named in `name` (the same words as compare's missing period). */
const MISSING_VALUE = MISSING_PERIOD;

/** One value per --stratify-by column; null where it is missing or unreadable. */
export type StratumValues = readonly (string | null)[];

/** The value of one column as text: text trimmed, numbers and booleans as written, anything else as JSON. */
function textOf(value: unknown): string | null {
  if (isAbsent(value)) return null;
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null; // nested too deeply to write: unreadable
  }
}

/** The stratum values of a row's data. */
export function stratumValues(data: Record<string, unknown>, columns: readonly StratifyColumn[]): (string | null)[] {
  return columns.map((c) => {
    const value = getField(data, c.column)?.value;
    return c.group ? periodOf(value, c.group) : textOf(value);
  });
}

/** `2024-07|Approve`, `(missing)|Reject`; the whole input (no --stratify-by) is `(all)`. Display only. */
export function stratumName(values: StratumValues): string {
  if (values.length === 0) return ALL_ROWS;
  return values.map((v) => v ?? MISSING_VALUE).join('|');
}

/** The one stratum of a sample without --stratify-by. */
const ALL_ROWS = '(all)';

/** An exact, collision-free key of a stratum's values (names are not: `a|b` + `c` and `a` + `b|c`). */
export function stratumKey(values: StratumValues): string {
  return JSON.stringify(values);
}

/**
 * The order strata are listed in (manifest, summary, report) and allocated in (ties of the largest remainder):
 * column by column, missing last, then as text (dates grouped by month, week or quarter sort chronologically
 * as text). Independent of the order rows are read in.
 */
export function compareStrata(a: StratumValues, b: StratumValues): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}
