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
function redact(input: unknown): unknown {
  if (Array.isArray(input)) return input.map(redact);
  if (!isObj(input)) return input;
  let out: Obj | undefined;
  for (const k of Object.keys(input)) {
    const v = input[k];
    const r =
      SECRET_KEYS.has(k) && v !== undefined ? '**********' : v !== null && typeof v === 'object' ? redact(v) : v;
    if (r !== v) {
      out ??= { ...input };
      out[k] = r;
    }
  }
  return out ?? input;
}

const TRUE = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE = new Set(['0', 'off', 'f', 'false', 'n', 'no']);
const FLOAT = { type: 'float', noun: 'number', unreadable: 'unable to parse string as a number' };
const BOOL = { type: 'bool', noun: 'boolean', unreadable: 'unable to interpret input' };

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

  /** The field's value, or undefined after reporting it missing (when required). */
  #present(o: Obj, key: string, loc: Loc, required: boolean): { v: unknown; at: Loc } | undefined {
    const at = [...loc, key];
    const v = o[key];
    if (v !== undefined) return { v, at };
    if (required) this.missing(o, at);
    return undefined;
  }

  /** A field that must pass `ok`, reported as `type` with `msg` otherwise. */
  #shaped<T>(
    o: Obj,
    key: string,
    loc: Loc,
    required: boolean,
    ok: (v: unknown) => v is T,
    type: string,
    msg: string,
  ): T | undefined {
    const f = this.#present(o, key, loc, required);
    if (!f) return undefined;
    if (ok(f.v)) return f.v;
    this.add({ type, loc: f.at, msg, input: f.v });
    return undefined;
  }

  /**
   * A pydantic lax scalar: the value as it is (`exact`), or read from a string (`fromText`); otherwise a
   * `<type>_parsing` issue for a string and `<type>_type` for anything else.
   */
  #lax<T>(
    o: Obj,
    key: string,
    loc: Loc,
    required: boolean,
    kind: { type: string; noun: string; unreadable: string },
    exact: (v: unknown) => T | undefined,
    fromText: (s: string) => T | undefined,
  ): T | undefined {
    const f = this.#present(o, key, loc, required);
    if (!f) return undefined;
    const direct = exact(f.v);
    if (direct !== undefined) return direct;
    if (typeof f.v === 'string') {
      const read = fromText(f.v.trim());
      if (read !== undefined) return read;
      this.add({
        type: `${kind.type}_parsing`,
        loc: f.at,
        msg: `Input should be a valid ${kind.noun}, ${kind.unreadable}`,
        input: f.v,
      });
      return undefined;
    }
    this.add({ type: `${kind.type}_type`, loc: f.at, msg: `Input should be a valid ${kind.noun}`, input: f.v });
    return undefined;
  }

  /** Required (or optional) string field. */
  str(o: Obj, key: string, loc: Loc, required = true, opts: StrOptions = {}): string | undefined {
    const v = this.#shaped(
      o,
      key,
      loc,
      required,
      (x): x is string => typeof x === 'string',
      'string_type',
      'Input should be a valid string',
    );
    if (v === undefined) return undefined;
    const at = [...loc, key];
    if (opts.maxLength !== undefined && v.length > opts.maxLength) {
      this.add({
        type: 'string_too_long',
        loc: at,
        msg: `String should have at most ${opts.maxLength} characters`,
        input: v,
        ctx: { max_length: opts.maxLength },
      });
      return undefined;
    }
    if (opts.pattern && !opts.pattern.test(v)) {
      const pattern = opts.patternText ?? opts.pattern.source;
      this.add({
        type: 'string_pattern_mismatch',
        loc: at,
        msg: `String should match pattern '${pattern}'`,
        input: v,
        ctx: { pattern },
      });
      return undefined;
    }
    return v;
  }

  /** Required (or optional) number field (pydantic float, lax). */
  num(o: Obj, key: string, loc: Loc, required = true): number | undefined {
    return this.#lax(
      o,
      key,
      loc,
      required,
      FLOAT,
      (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined),
      (s) => (s !== '' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s) ? Number(s) : undefined),
    );
  }

  /** Required (or optional) boolean field (pydantic bool, lax). */
  bool(o: Obj, key: string, loc: Loc, required = true): boolean | undefined {
    return this.#lax(
      o,
      key,
      loc,
      required,
      BOOL,
      (v) => (typeof v === 'boolean' ? v : v === 0 || v === 1 ? v === 1 : undefined),
      (s) => (TRUE.has(s.toLowerCase()) ? true : FALSE.has(s.toLowerCase()) ? false : undefined),
    );
  }

  /** Required (or optional) JSON object field. */
  obj(o: Obj, key: string, loc: Loc, required = true): Obj | undefined {
    return this.#shaped(o, key, loc, required, isObj, 'dict_type', 'Input should be a valid dictionary');
  }

  /** Required (or optional) JSON array field. */
  list(o: Obj, key: string, loc: Loc, required = true): unknown[] | undefined {
    return this.#shaped(
      o,
      key,
      loc,
      required,
      (x): x is unknown[] => Array.isArray(x),
      'list_type',
      'Input should be a valid list',
    );
  }

  /** A string that must be one of `values` (pydantic Literal). */
  literal<T extends string>(o: Obj, key: string, loc: Loc, values: readonly T[], required = true): T | undefined {
    const v = this.str(o, key, loc, required);
    if (v === undefined) return undefined;
    if ((values as readonly string[]).includes(v)) return v as T;
    const expected =
      values.length === 1
        ? `'${values[0]}'`
        : `${values
            .slice(0, -1)
            .map((x) => `'${x}'`)
            .join(', ')} or '${values[values.length - 1]}'`;
    this.add({
      type: 'literal_error',
      loc: [...loc, key],
      msg: `Input should be ${expected}`,
      input: v,
      ctx: { expected },
    });
    return undefined;
  }
}

/** The body is not an object (an array, a string, bytes of another content type). */
export function bodyNotObject(body: unknown): FieldIssue {
  return {
    type: 'model_attributes_type',
    loc: ['body'],
    msg: 'Input should be a valid dictionary or object to extract fields from',
    input: body,
  };
}

/** No body at all. */
export const BODY_MISSING: FieldIssue = { type: 'missing', loc: ['body'], msg: 'Field required', input: null };

/** Unparsable JSON (FastAPI's own entry: loc ['body', <char offset>], input {}). */
export function jsonInvalid(position: number, error: string): FieldIssue {
  return { type: 'json_invalid', loc: ['body', position], msg: 'JSON decode error', input: {}, ctx: { error } };
}
