/**
 * Which worker owns a row: a stable hash (FNV-1a, 32 bit) of the row key, so N workers over the same input
 * split it the same way on every machine and every run. Rows without a key hash their row number.
 * The runner, `--plan` and `merge` all decide it here.
 */
import type { InputRow } from '@bre-batch/core/types';

/** The row's key as written to the output files: text, or null when the row has none. */
export function rowKey(row: InputRow, keyColumn: string): string | null {
  const v = row.data[keyColumn];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return null; // nested too deeply to serialise (a RangeError): the row has no usable key
  }
}

/**
 * The key a row's line in results or errors carries: its key column's, but none for a row that could not be
 * read, unless a database read it whole and refused it for sharing its key with others (DUPLICATE_KEY).
 */
export function lineKey(row: InputRow, keyColumn: string): string | null {
  if (row.readError && row.readError.code !== 'DUPLICATE_KEY') return null;
  return rowKey(row, keyColumn);
}

/** A row's error for its key: it has none (MISSING_KEY), or another row has it too (DUPLICATE_KEY). */
export function keyError(
  code: 'MISSING_KEY' | 'DUPLICATE_KEY',
  field: string,
  message: string,
): NonNullable<InputRow['readError']> {
  return { code, field, expected: code === 'MISSING_KEY' ? `a value in ${field}` : `one row per ${field}`, message };
}

export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function shardOf(key: unknown, row: number, count: number): number {
  const text = key === null || key === undefined || key === '' ? `#row:${row}` : String(key);
  return (fnv1a(text) % count) + 1;
}

export function parseShard(text: string): { index: number; count: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) {
    throw new Error(`Expected --shard K/N with 1 <= K <= N (e.g. 2/4), got '${text}'`);
  }
  return { index, count };
}
