/**
 * Field access on an input row. CONTRACT "Input": a nested API field may be given by its dotted path
 * (`external.bureau_type`), by its last name (`bureau_type`), or, in NDJSON, as an actual nested object
 * (`{"external":{"bureau_type":...}}`). Empty CSV cells, whitespace-only strings and JSON null are absent.
 */

export interface FieldValue {
  readonly value: unknown;
  /** The column the user used (for a nested NDJSON object: the dotted path). Error messages name this. */
  readonly column: string;
}

export function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(data: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(data, key) ? data[key] : undefined;
}

/**
 * The value of `name` in the row, and the column it came from. Precedence, most specific first: the exact
 * column `name`, then a nested NDJSON object along the dotted path, then the last name as a column. So a
 * row with both `external.bureau_type` and `bureau_type` uses the dotted one.
 */
export function getField(data: Record<string, unknown>, name: string): FieldValue | undefined {
  const exact = own(data, name);
  if (!isAbsent(exact)) return { value: exact, column: name };
  const parts = name.split('.');
  if (parts.length === 1) return undefined;
  let cur: unknown = data;
  for (const part of parts) {
    cur = isPlainObject(cur) ? own(cur, part) : undefined;
    if (cur === undefined) break;
  }
  if (!isAbsent(cur)) return { value: cur, column: name };
  const last = parts[parts.length - 1];
  const byLast = own(data, last);
  if (!isAbsent(byLast)) return { value: byLast, column: last };
  return undefined;
}

/** The first of `names` present in the row (aliases, e.g. `raw_data` / `bureau_raw_json`). */
export function getFirstField(data: Record<string, unknown>, names: readonly string[]): FieldValue | undefined {
  for (const name of names) {
    const found = getField(data, name);
    if (found) return found;
  }
  return undefined;
}

/**
 * Sets `obj.a.b.c = value` for the path `a.b.c`, creating plain objects on the way. Keys are defined as
 * own data properties, so a column named `__proto__` cannot reach a prototype.
 */
export function setPath(obj: Record<string, unknown>, path: string | readonly string[], value: unknown): void {
  const parts = typeof path === 'string' ? path.split('.') : path;
  let cur = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = own(cur, parts[i]);
    if (isPlainObject(next)) {
      cur = next;
    } else {
      const created: Record<string, unknown> = {};
      define(cur, parts[i], created);
      cur = created;
    }
  }
  define(cur, parts[parts.length - 1], value);
}

/** `obj[key] = value` as an own data property, also for the key `__proto__`. */
export function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  // Only `__proto__` needs defineProperty (assignment would set the prototype); it is slow for the rest.
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
