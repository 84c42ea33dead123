/**
 * Field tables (the spec's request tables, one row per field) turned into one zod schema of the request
 * body, and a row turned into the body through it. Every problem of the row is reported, not just the first.
 * Shared by the workflow and bureau requests, with the identifiers both carry (TOP_FIELDS).
 */
import { z } from 'zod';
import type { FieldError } from '../input/validation.js';
import { issuesToFieldErrors, zNumber, zString, type NumberRule } from '../input/coerce.js';
import { COMMA_STYLE } from '@bre-batch/formats/input/numbers';
import type { NumberStyle } from '@bre-batch/core/types';
import { getFirstField, isPlainObject, setPath } from '@bre-batch/formats/input/fields';

export interface FieldSpec {
  /**
   * Name looked up in the row (dotted for nested API fields; the last name works too,
   * packages/formats/src/input/fields.ts).
   */
  readonly column: string;
  /** Further names tried after `column` (e.g. `external.bank_type` for a top-level `bank_type`). */
  readonly aliases?: readonly string[];
  /** Where the value goes in the request body, dotted (`input_data.external.bureau_type`). */
  readonly target: string;
  /** Coerces and validates the value (../input/coerce.ts). Optional fields use `.optional()`. */
  readonly schema: z.ZodType<unknown>;
  /** Used when the row has no value (e.g. bank_type in a mode that implies it). */
  readonly default?: unknown;
  /** Set for number fields: their schema is rebuilt for the file's NumberStyle (a `;` file, --decimal-comma). */
  readonly number?: NumberRule;
}

/** Decision spec 2.1 / 8: user_id and app_user_id are at most 64 characters. */
export const ID_MAX = 64;

/** The identifiers at the top of every workflow and bureau request body. */
export const TOP_FIELDS: readonly FieldSpec[] = [
  {
    column: 'user_id',
    target: 'user_id',
    schema: zString({ maxLength: ID_MAX, expected: `a user id of at most ${ID_MAX} characters` }),
  },
  {
    column: 'reference_id',
    target: 'reference_id',
    schema: zString({ expected: 'a reference id (the loan application)' }),
  },
];

type Shape = { [key: string]: z.ZodType<unknown> | Shape };

/** The nested z.object of a table, keyed by `target`; number fields read text in `style`. */
export function tableSchema(
  table: readonly FieldSpec[],
  style: NumberStyle = COMMA_STYLE,
): z.ZodType<Record<string, unknown>> {
  const root: Shape = {};
  for (const spec of table) {
    const parts = spec.target.split('.');
    let cur = root;
    for (const part of parts.slice(0, -1)) {
      const next = cur[part];
      if (next === undefined) cur[part] = {};
      else if (next instanceof z.ZodType) throw new Error(`field table: ${spec.target} is inside a leaf`);
      cur = cur[part] as Shape;
    }
    cur[parts[parts.length - 1]] = spec.number && style !== COMMA_STYLE ? zNumber(spec.number, style) : spec.schema;
  }
  const build = (shape: Shape): z.ZodType<Record<string, unknown>> =>
    z.object(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v instanceof z.ZodType ? v : build(v)])));
  return build(root);
}

export type Validated =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly errors: FieldError[] };

/** A table's lookups, worked out once: the names tried for each field and its target path split. */
interface CompiledField {
  readonly spec: FieldSpec;
  readonly names: readonly string[];
  readonly path: readonly string[];
}
const compiledTables = new WeakMap<readonly FieldSpec[], readonly CompiledField[]>();
function compiled(table: readonly FieldSpec[]): readonly CompiledField[] {
  let c = compiledTables.get(table);
  if (!c) {
    c = table.map((spec) => ({ spec, names: [spec.column, ...(spec.aliases ?? [])], path: spec.target.split('.') }));
    compiledTables.set(table, c);
  }
  return c;
}

/** Reads the table's fields from the row and validates them; field errors name the user's columns. */
export function validateTable(
  data: Record<string, unknown>,
  table: readonly FieldSpec[],
  schema = tableSchema(table),
): Validated {
  const fields = compiled(table);
  const candidate: Record<string, unknown> = {};
  for (const f of fields) {
    const found = getFirstField(data, f.names);
    setPath(candidate, f.path, found ? found.value : f.spec.default);
  }
  const parsed = schema.safeParse(candidate);
  if (parsed.success) return { ok: true, value: dropUndefined(parsed.data) };
  // Only a failing row needs to know which column each field came from.
  const columnOf = new Map<string, string>();
  for (const f of fields) columnOf.set(f.spec.target, getFirstField(data, f.names)?.column ?? f.spec.column);
  return { ok: false, errors: issuesToFieldErrors(parsed.error.issues, (path) => columnOf.get(path) ?? path) };
}

/** Optional fields that were absent are left out of the body, not sent as null. */
function dropUndefined(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v === undefined) continue;
    setPath(out, [k], isPlainObject(v) ? dropUndefined(v) : v);
  }
  return out;
}
