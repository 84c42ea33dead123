/**
 * Coercion of raw row values (CSV text, NDJSON JSON) to the types the API documents, as zod schemas that
 * report "Expected X, got Y", and the mapping of zod issues to FieldErrors named by the user's column. What is
 * accepted (numbers with their separators, booleans, text, absent values) is docs/input.md's, and why
 * docs/decisions/input-coercion.md. A number's style with a decimal comma: `NumberStyle`.
 */
import { z } from 'zod';
import type { FieldError } from './validation.js';
import type { NumberStyle } from '@bre-batch/core/types';
import { isAbsent } from '@bre-batch/formats/input/fields';
import { isPersonalField, maskText } from '@bre-batch/formats/input/mask';
import { COMMA_STYLE, parseNumber } from '@bre-batch/formats/input/numbers';
import { DECIMAL_COMMA_KIND, valueKind, type NumberBounds } from '@bre-batch/formats/input/value-kind';

/**
 * What a number field expected, in words, for the value it got: with --decimal-comma it says so; a comma
 * refused in a file not separated by commas names the option that reads it.
 */
export function numberExpected(base: string, style: NumberStyle, got: unknown): string {
  if (style.decimalComma) return `${base}, written with a decimal comma (--decimal-comma), e.g. 19,076 or 1.20.000,50`;
  if (style.separator !== ',' && typeof got === 'string' && got.includes(',')) {
    const sep = style.separator === '\t' ? 'TAB' : `'${style.separator}'`;
    return `${base}; a comma in a number of a file separated by ${sep} is not guessed: give --decimal-comma if it is the decimal separator (19,076 then reads as 19.076), or write the number without it`;
  }
  return base;
}

const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

export function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== 'string') return undefined;
  const s = value.trim().toLowerCase();
  if (TRUE_WORDS.has(s)) return true;
  if (FALSE_WORDS.has(s)) return false;
  return undefined;
}

export function parseString(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** What an issue carries besides zod's own fields (read back by `issuesToFieldErrors`). */
interface CoerceIssueParams {
  readonly expected: string;
  readonly got: unknown;
  readonly missing?: boolean;
  /** How a number field read its text and the bounds it keeps: what its message says of a value's kind. */
  readonly reading?: Reading;
}

function coercing<T>(
  expected: string | ((got: unknown) => string),
  parse: (v: unknown) => T | undefined,
  reading?: Reading,
): z.ZodType<T> {
  return z.unknown().transform((value, ctx) => {
    const missing = isAbsent(value);
    const parsed = missing ? undefined : parse(value);
    if (parsed === undefined) {
      const params: CoerceIssueParams = {
        expected: typeof expected === 'string' ? expected : expected(value),
        got: value,
        missing,
        ...(reading ? { reading } : {}),
      };
      ctx.addIssue({ code: 'custom', message: `Expected ${params.expected}`, input: value, params });
      return z.NEVER;
    }
    return parsed;
  }) as unknown as z.ZodType<T>;
}

export interface NumberRule extends NumberBounds {
  /** Overrides the generated wording, e.g. "a latitude between -90 and 90". */
  readonly expected?: string;
}

function numberExpectation(rule: NumberRule = {}): string {
  if (rule.expected) return rule.expected;
  const noun = rule.integer ? 'a whole number' : 'a number';
  if (rule.min !== undefined && rule.max !== undefined) return `${noun} between ${rule.min} and ${rule.max}`;
  if (rule.min !== undefined) return rule.min === 0 ? `${noun} >= 0` : `${noun} >= ${rule.min}`;
  if (rule.max !== undefined) return `${noun} <= ${rule.max}`;
  return noun;
}

export function zNumber(rule: NumberRule = {}, style: NumberStyle = COMMA_STYLE): z.ZodType<number> {
  const base = numberExpectation(rule);
  const expected = style === COMMA_STYLE ? base : (got: unknown) => numberExpected(base, style, got);
  return coercing(
    expected,
    (v) => {
      const n = parseNumber(v, style);
      if (n === undefined) return undefined;
      if (rule.integer && !Number.isInteger(n)) return undefined;
      if (rule.min !== undefined && n < rule.min) return undefined;
      if (rule.max !== undefined && n > rule.max) return undefined;
      return n;
    },
    { style, bounds: rule },
  );
}

export function zBoolean(): z.ZodType<boolean> {
  return coercing('a boolean (true/false, yes/no or 1/0)', parseBoolean);
}

export interface StringRule {
  readonly maxLength?: number;
  /** The only values accepted (exact, after trimming). */
  readonly oneOf?: readonly string[];
  readonly pattern?: RegExp;
  readonly expected?: string;
}

function stringExpectation(rule: StringRule = {}): string {
  if (rule.expected) return rule.expected;
  if (rule.oneOf) return rule.oneOf.length === 1 ? `'${rule.oneOf[0]}'` : `one of ${rule.oneOf.join(', ')}`;
  if (rule.maxLength !== undefined) return `a string of at most ${rule.maxLength} characters`;
  return 'a string';
}

export function zString(rule: StringRule = {}): z.ZodType<string> {
  return coercing(stringExpectation(rule), (v) => {
    const s = parseString(v);
    if (s === undefined || s === '') return undefined;
    if (rule.maxLength !== undefined && s.length > rule.maxLength) return undefined;
    if (rule.oneOf && !rule.oneOf.includes(s)) return undefined;
    if (rule.pattern && !rule.pattern.test(s)) return undefined;
    return s;
  });
}

/** How a value was read, for the words describing it: the file's number style and a number field's bounds. */
export interface Reading {
  readonly style?: NumberStyle;
  readonly bounds?: NumberBounds;
  /** What the field expected: a hint it already gives (--decimal-comma) is not repeated. */
  readonly expected?: string;
}

/**
 * A value for a message: quoted as given (shortened; PAN-, phone- and e-mail-like text masked unless `asGiven`),
 * or only its kind when the field is personal data or a secret (FieldError.message must not carry those values):
 * "text of 3 characters", "a number above 90". A number with a decimal comma where none is read names the option.
 */
export function describeValue(value: unknown, personal = false, r: Reading & { asGiven?: boolean } = {}): string {
  const kind = valueKind(value, r.style, r.bounds);
  const hint =
    kind === DECIMAL_COMMA_KIND && !r.expected?.includes('--decimal-comma')
      ? `${kind}: see --decimal-comma`
      : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    if (personal) return hint ?? kind;
    const short = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    const quoted = `'${r.asGiven ? short : maskText(short)}'`;
    return hint ? `${quoted}, ${hint}` : quoted;
  }
  if (personal || (typeof value !== 'number' && typeof value !== 'boolean')) return kind;
  return String(value);
}

/** One FieldError in the house wording. */
export function fieldError(
  field: string,
  expected: string,
  got: unknown,
  o: { code?: FieldError['code']; missing?: boolean; reading?: Reading } = {},
): FieldError {
  const code = o.code ? { code: o.code } : {};
  if (o.missing ?? isAbsent(got))
    return { field, expected, message: `Missing required field '${field}': expected ${expected}`, ...code };
  const said = (personal: boolean, asGiven = false) =>
    `${field}: Expected ${expected}, got ${describeValue(got, personal, { ...o.reading, expected, asGiven })}`;
  // A personal field's message says the kind of its value; the value itself only for --keep-personal-data.
  const personal = isPersonalField(field);
  return { field, expected, message: said(personal), ...(personal ? { quoting: said(false, true) } : {}), ...code };
}

/**
 * zod issues as FieldErrors. `columnOf` turns an issue path (into the validated candidate) into the column
 * the user used, so the message names `bureau_type` if that is what the file calls it.
 */
export function issuesToFieldErrors(
  issues: readonly z.core.$ZodIssue[],
  columnOf: (path: string) => string,
): FieldError[] {
  return issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = columnOf(path);
    const params = (issue as { params?: Partial<CoerceIssueParams> }).params;
    if (params?.expected !== undefined)
      return fieldError(field, params.expected, params.got, {
        missing: params.missing ?? false,
        reading: params.reading,
      });
    // zod's own issues (a nested object missing or of the wrong type) have no `got` we can trust to print
    const expected =
      issue.code === 'invalid_type' ? `${(issue as { expected?: string }).expected ?? 'a value'}` : issue.message;
    return { field, expected, message: `${field}: ${issue.message}` };
  });
}
