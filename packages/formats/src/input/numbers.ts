/**
 * Numbers written as text, read by the rules docs/input.md documents (see src/input/coerce.ts): plain
 * decimals, thousands grouped Western or Indian in a comma-separated file, and with --decimal-comma a decimal
 * comma with dots grouping. Apart from the coercion so that masking (./mask.ts) can tell a number's kind too.
 */
import type { NumberStyle } from '@bre-batch/core/types';

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const GROUPED_RE = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})*,\d{3})(?:\.\d+)?$/;
/** --decimal-comma: digits, grouped by dots (Western or Indian) or not, then an optional decimal comma. */
const DECIMAL_COMMA_RE = /^[+-]?(?:(?:\d+|\d{1,3}(?:\.\d{3})+|\d{1,2}(?:\.\d{2})*\.\d{3})(?:,\d+)?|,\d+)$/;

/** Today's rule for comma-separated files, NDJSON and Parquet. */
export const COMMA_STYLE: NumberStyle = { decimalComma: false, separator: ',' };

export function parseNumber(value: unknown, style: NumberStyle = COMMA_STYLE): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  if (style.decimalComma) return DECIMAL_COMMA_RE.test(s) ? Number(s.replace(/\./g, '').replace(',', '.')) : undefined;
  if (NUMBER_RE.test(s)) return Number(s);
  if (style.separator === ',' && GROUPED_RE.test(s)) return Number(s.replace(/,/g, ''));
  return undefined;
}

/** Text that reads as a number with a decimal comma (`19,076`, `1.20.000,50`) where none is expected. */
export function hasDecimalComma(value: unknown, style: NumberStyle = COMMA_STYLE): boolean {
  if (style.decimalComma || typeof value !== 'string') return false;
  const s = value.trim();
  return s.includes(',') && DECIMAL_COMMA_RE.test(s);
}
