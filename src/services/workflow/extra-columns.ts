/**
 * Columns sent to a workflow as they are: every column for a client's own workflow (spec 1.5: "a workflow
 * built for a client may use others"), and the `pass_columns` of a named one. Dotted names are nested
 * (`external.score` -> input_data.external.score). CSV values stay text unless `column_types` says otherwise
 * (the spec types no field of an unknown workflow, and ids must never turn into numbers); NDJSON values keep
 * their JSON types.
 */
import type { FieldError } from '../../input/validation.js';
import { fieldError, numberExpected, parseBoolean, parseString } from '../../input/coerce.js';
import { COMMA_STYLE, parseNumber } from '@bre-batch/formats/input/numbers';
import type { NumberStyle } from '@bre-batch/core/types';
import { isAbsent, setPath } from '@bre-batch/formats/input/fields';

export type ColumnType = 'string' | 'number' | 'boolean' | 'json';
export const COLUMN_TYPES: readonly ColumnType[] = ['string', 'number', 'boolean', 'json'];

const EXPECTED: Readonly<Record<ColumnType, string>> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean (true/false, yes/no or 1/0)',
  json: 'JSON (an object, array or value)',
};

function coerceAs(type: ColumnType, value: unknown, style: NumberStyle): { ok: true; value: unknown } | { ok: false } {
  switch (type) {
    case 'string': {
      const s = parseString(value);
      return s === undefined ? { ok: false } : { ok: true, value: s };
    }
    case 'number': {
      const n = parseNumber(value, style);
      return n === undefined ? { ok: false } : { ok: true, value: n };
    }
    case 'boolean': {
      const b = parseBoolean(value);
      return b === undefined ? { ok: false } : { ok: true, value: b };
    }
    case 'json':
      if (typeof value !== 'string') return { ok: true, value };
      try {
        return { ok: true, value: JSON.parse(value) };
      } catch {
        return { ok: false };
      }
  }
}

/**
 * Copies `columns` of the row into `target` (the input_data object), coercing those named in `types`.
 * Values are copied (structuredClone), so the request never shares objects with the row.
 */
export function copyColumns(
  data: Record<string, unknown>,
  columns: Iterable<string>,
  target: Record<string, unknown>,
  types: Readonly<Record<string, ColumnType>> = {},
  style: NumberStyle = COMMA_STYLE,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const column of columns) {
    const raw = Object.hasOwn(data, column) ? data[column] : undefined;
    if (isAbsent(raw)) continue;
    const type = types[column];
    let value: unknown = raw;
    if (type) {
      const c = coerceAs(type, raw, style);
      if (!c.ok) {
        errors.push(
          fieldError(column, type === 'number' ? numberExpected(EXPECTED.number, style, raw) : EXPECTED[type], raw, {
            reading: { style },
          }),
        );
        continue;
      }
      value = c.value;
    }
    setPath(target, column, typeof value === 'object' && value !== null ? structuredClone(value) : value);
  }
  return errors;
}
