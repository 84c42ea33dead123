/**
 * Request-body validation in the style of the real services (FastAPI + pydantic v2, lax mode): every
 * problem of a body is collected into one list of `{type, loc, msg, input[, ctx]}` entries (decision spec
 * section 7, account spec section 7). Lax like pydantic: a numeric string is accepted for a number and
 * "true"/"yes"/1 for a boolean; a number is NOT accepted for a string. `input` of a `missing` entry is the
 * object the field is missing from (so the received body for top-level fields).
 */
export type Loc = readonly (string | number)[];

export interface FieldIssue {
  readonly type: string;
  readonly loc: Loc;
  readonly msg: string;
  readonly input: unknown;
  readonly ctx?: Record<string, unknown>;
}

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Keys whose values are never echoed back in an error's `input` (secrets of the caller). */
const SECRET_KEYS = new Set(['auth_token']);

/** A copy of an echoed input with secret values replaced (a sandbox must not reflect tokens). */
export function redact(input: unknown): unknown {
  if (Array.isArray(input)) return input.map(redact);
  if (!isObj(input)) return input;
  let out: Obj | undefined;
  for (const k of Object.keys(input)) {
    const v = input[k];
    const r = SECRET_KEYS.has(k) && v !== undefined ? '**********' : (v !== null && typeof v === 'object' ? redact(v) : v);
    if (r !== v) { out ??= { ...input }; out[k] = r; }
  }
  return out ?? input;
}

const TRUE = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

export interface StrOptions {
  readonly maxLength?: number;
  readonly pattern?: RegExp;
  /** Shown in the pattern error (pydantic shows the pattern source). */
  readonly patternText?: string;
}

export class Validator {
  readonly issues: FieldIssue[] = [];

  get ok(): boolean {
    return this.issues.length === 0;
  }

  add(issue: FieldIssue): void {
    this.issues.push({ ...issue, input: redact(issue.input) });
  }

  missing(parent: Obj, loc: Loc): void {
    this.add({ type: 'missing', loc, msg: 'Field required', input: parent });
  }

  /** Required (or optional) string field. */
  str(o: Obj, key: string, loc: Loc, required = true, opts: StrOptions = {}): string | undefined {
    const v = o[key];
    const at = [...loc, key];
    if (v === undefined) { if (required) this.missing(o, at); return undefined; }
    if (typeof v !== 'string') { this.add({ type: 'string_type', loc: at, msg: 'Input should be a valid string', input: v }); return undefined; }
    if (opts.maxLength !== undefined && v.length > opts.maxLength) {
      this.add({ type: 'string_too_long', loc: at, msg: `String should have at most ${opts.maxLength} characters`, input: v, ctx: { max_length: opts.maxLength } });
      return undefined;
    }
    if (opts.pattern && !opts.pattern.test(v)) {
      const pattern = opts.patternText ?? opts.pattern.source;
      this.add({ type: 'string_pattern_mismatch', loc: at, msg: `String should match pattern '${pattern}'`, input: v, ctx: { pattern } });
      return undefined;
    }
    return v;
  }

  /** Required (or optional) number field (pydantic float, lax). */
  num(o: Obj, key: string, loc: Loc, required = true): number | undefined {
    const v = o[key];
    const at = [...loc, key];
    if (v === undefined) { if (required) this.missing(o, at); return undefined; }
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (typeof v === 'string') {
      const s = v.trim();
      if (s !== '' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return Number(s);
      this.add({ type: 'float_parsing', loc: at, msg: 'Input should be a valid number, unable to parse string as a number', input: v });
      return undefined;
    }
    this.add({ type: 'float_type', loc: at, msg: 'Input should be a valid number', input: v });
    return undefined;
  }

  /** Required (or optional) boolean field (pydantic bool, lax). */
  bool(o: Obj, key: string, loc: Loc, required = true): boolean | undefined {
    const v = o[key];
    const at = [...loc, key];
    if (v === undefined) { if (required) this.missing(o, at); return undefined; }
    if (typeof v === 'boolean') return v;
    if (v === 0 || v === 1) return v === 1;
    if (typeof v === 'string') {
      const s = v.trim().toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      this.add({ type: 'bool_parsing', loc: at, msg: 'Input should be a valid boolean, unable to interpret input', input: v });
      return undefined;
    }
    this.add({ type: 'bool_type', loc: at, msg: 'Input should be a valid boolean', input: v });
    return undefined;
  }

  /** Required (or optional) JSON object field. */
  obj(o: Obj, key: string, loc: Loc, required = true): Obj | undefined {
    const v = o[key];
    const at = [...loc, key];
    if (v === undefined) { if (required) this.missing(o, at); return undefined; }
    if (!isObj(v)) { this.add({ type: 'dict_type', loc: at, msg: 'Input should be a valid dictionary', input: v }); return undefined; }
    return v;
  }

  /** Required (or optional) JSON array field. */
  list(o: Obj, key: string, loc: Loc, required = true): unknown[] | undefined {
    const v = o[key];
    const at = [...loc, key];
    if (v === undefined) { if (required) this.missing(o, at); return undefined; }
    if (!Array.isArray(v)) { this.add({ type: 'list_type', loc: at, msg: 'Input should be a valid list', input: v }); return undefined; }
    return v;
  }

  /** A string that must be one of `values` (pydantic Literal). */
  literal<T extends string>(o: Obj, key: string, loc: Loc, values: readonly T[], required = true): T | undefined {
    const v = this.str(o, key, loc, required);
    if (v === undefined) return undefined;
    if ((values as readonly string[]).includes(v)) return v as T;
    const expected = values.length === 1 ? `'${values[0]}'` : `${values.slice(0, -1).map((x) => `'${x}'`).join(', ')} or '${values[values.length - 1]}'`;
    this.add({ type: 'literal_error', loc: [...loc, key], msg: `Input should be ${expected}`, input: v, ctx: { expected } });
    return undefined;
  }
}

/** The body is not an object (an array, a string, bytes of another content type). */
export function bodyNotObject(body: unknown): FieldIssue {
  return { type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: body };
}

/** No body at all. */
export const BODY_MISSING: FieldIssue = { type: 'missing', loc: ['body'], msg: 'Field required', input: null };

/** Unparsable JSON (FastAPI's own entry: loc ['body', <char offset>], input {}). */
export function jsonInvalid(position: number, error: string): FieldIssue {
  return { type: 'json_invalid', loc: ['body', position], msg: 'JSON decode error', input: {}, ctx: { error } };
}
