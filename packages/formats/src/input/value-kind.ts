/**
 * What kind of value a field held, in words that do not give the value away: what a message says of a
 * personal field's value (src/input/coerce.ts) and what the masked row shows where a value cannot be masked by its
 * shape (a latitude that is not a number, ./mask.ts). Enough to act on: text where a number was expected, a
 * decimal comma (with the option that reads it), a number past the bound it broke.
 */
import type { NumberStyle } from '@bre-batch/core/types';
import { COMMA_STYLE, hasDecimalComma, parseNumber } from './numbers.js';

/** The bounds a number field keeps (src/input/coerce.ts NumberRule). */
export interface NumberBounds {
  readonly min?: number;
  readonly max?: number;
  readonly integer?: boolean;
}

export const DECIMAL_COMMA_KIND = 'a number with a decimal comma';

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The kind of `value` as read in `style`; for a number, which of `bounds` it broke. */
export function valueKind(value: unknown, style: NumberStyle = COMMA_STYLE, bounds: NumberBounds = {}): string {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value === 'boolean') return 'a boolean';
  if (Array.isArray(value)) return `an array of ${plural(value.length, 'item')}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string' && value.trim() === '') return 'an empty value';
  // before reading it as a number: `19,076` also reads as 19076 with the comma grouping digits
  if (hasDecimalComma(value, style)) return DECIMAL_COMMA_KIND;
  const n = parseNumber(value, style);
  if (n !== undefined) {
    if (bounds.min !== undefined && n < bounds.min) return `a number below ${bounds.min}`;
    if (bounds.max !== undefined && n > bounds.max) return `a number above ${bounds.max}`;
    if (bounds.integer && !Number.isInteger(n)) return 'a number with a fraction';
    return 'a number';
  }
  if (typeof value === 'number') return 'a number that is not finite';
  if (typeof value === 'string') return `text of ${plural([...value].length, 'character')}`;
  return `a ${typeof value}`;
}
