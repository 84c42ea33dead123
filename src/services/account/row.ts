/**
 * Reading the account stages' input columns, on top of the shared field access (packages/formats/src/input/fields.ts:
 * exact column, dotted path, last name; empty cells absent) and coercion (src/input/coerce.ts).
 */
import { parseBoolean, parseString } from '../../input/coerce.js';
import { getFirstField, type FieldValue } from '@bre-batch/formats/input/fields';

export type Found = FieldValue;

/** First present column among `names` (in order of preference). */
export function findColumn(data: Record<string, unknown>, names: readonly string[]): Found | undefined {
  return getFirstField(data, names);
}

export type TextField =
  | { readonly ok: true; readonly value: string; readonly column: string }
  | { readonly ok: false; readonly column: string; readonly got: string };

/**
 * An identifier column (user_id, aa_session_id): a non-empty string; a number from NDJSON is taken as its
 * decimal text. Undefined when absent.
 */
export function readIdentifier(data: Record<string, unknown>, name: string): TextField | undefined {
  const found = findColumn(data, [name]);
  if (!found) return undefined;
  const v = found.value;
  const text = typeof v === 'number' && !Number.isSafeInteger(v) ? undefined : parseString(v);
  if (text !== undefined) return { ok: true, value: text, column: found.column };
  return { ok: false, column: found.column, got: Array.isArray(v) ? 'an array' : `a ${typeof v}` };
}

/** Optional boolean column: true/false, yes/no, 1/0 (any case). */
export function readBoolean(
  data: Record<string, unknown>,
  name: string,
): { ok: true; value: boolean | undefined } | { ok: false; column: string; got: string } {
  const found = findColumn(data, [name]);
  if (!found) return { ok: true, value: undefined };
  const parsed = parseBoolean(found.value);
  if (parsed !== undefined) return { ok: true, value: parsed };
  return { ok: false, column: found.column, got: JSON.stringify(String(found.value).slice(0, 30)) };
}
