/**
 * Reading the account stages' input columns. A tiny local equivalent of src/input/fields.ts (written in
 * parallel): a column is found by its exact name or by a dotted name whose last part matches
 * (`session.aa_session_id`), and an empty cell counts as absent (CSV has no null).
 */

export interface Found {
  readonly value: unknown;
  /** The column as the user named it. */
  readonly column: string;
}

function isBlank(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** First non-blank column among `names` (in order of preference). */
export function findColumn(data: Record<string, unknown>, names: readonly string[]): Found | undefined {
  for (const name of names) {
    if (Object.hasOwn(data, name) && !isBlank(data[name])) return { value: data[name], column: name };
  }
  for (const name of names) {
    for (const key of Object.keys(data)) {
      if (key.endsWith(`.${name}`) && !isBlank(data[key])) return { value: data[key], column: key };
    }
  }
  return undefined;
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
  if (typeof v === 'string') return { ok: true, value: v.trim(), column: found.column };
  if (typeof v === 'number' && Number.isSafeInteger(v)) return { ok: true, value: String(v), column: found.column };
  return { ok: false, column: found.column, got: Array.isArray(v) ? 'an array' : `a ${typeof v}` };
}

/** Optional boolean column: true/false, yes/no, 1/0 (any case). */
export function readBoolean(data: Record<string, unknown>, name: string):
  { ok: true; value: boolean | undefined } | { ok: false; column: string; got: string } {
  const found = findColumn(data, [name]);
  if (!found) return { ok: true, value: undefined };
  const v = found.value;
  if (typeof v === 'boolean') return { ok: true, value: v };
  const text = String(v).trim().toLowerCase();
  if (['true', 'yes', '1'].includes(text)) return { ok: true, value: true };
  if (['false', 'no', '0'].includes(text)) return { ok: true, value: false };
  return { ok: false, column: found.column, got: JSON.stringify(String(v).slice(0, 30)) };
}
