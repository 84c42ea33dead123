/**
 * What every account call carries (spec 4: "Every request carries user_id and aa_session_id"; 2.1: both
 * alphanumeric strings from the SDK journey), read and checked from a row, plus small helpers shared by
 * the account stage kinds.
 */
import { BreError } from '@bre-batch/core/errors';
import type { InputRow } from '@bre-batch/core/types';
import type { FieldError } from '../../input/validation.js';
import { readIdentifier } from './row.js';

export interface AccountSession {
  readonly user_id: string;
  readonly aa_session_id: string;
}

const ID_EXPECTED = 'a non-empty identifier without spaces (from the SDK journey)';

function readId(row: InputRow, name: 'user_id' | 'aa_session_id', errors: FieldError[]): string {
  const r = readIdentifier(row.data, name);
  if (r === undefined) {
    errors.push({ field: name, expected: ID_EXPECTED, message: `Expected ${name}: ${ID_EXPECTED}, got nothing` });
    return '';
  }
  if (!r.ok) {
    errors.push({
      field: r.column,
      expected: ID_EXPECTED,
      message: `Expected ${r.column}: ${ID_EXPECTED}, got ${r.got}`,
    });
    return '';
  }
  if (/\s/.test(r.value)) {
    errors.push({
      field: r.column,
      expected: ID_EXPECTED,
      message: `Expected ${r.column}: ${ID_EXPECTED}, got a value containing spaces`,
    });
    return '';
  }
  return r.value;
}

/** user_id and aa_session_id of a row; field errors are appended to `errors`. */
export function readSession(row: InputRow, errors: FieldError[]): AccountSession {
  return { user_id: readId(row, 'user_id', errors), aa_session_id: readId(row, 'aa_session_id', errors) };
}

/** A 2xx body that must be a JSON object (anything else is BAD_RESPONSE: nothing can be read from it). */
export function expectObject(body: unknown, path: string): Record<string, unknown> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  throw new BreError(
    'BAD_RESPONSE',
    `Expected a JSON object from ${path}, got ${Array.isArray(body) ? 'an array' : typeof body}`,
    { service: 'account' },
  );
}

/** A short, safe text for an `error` object of a BSA answer (2.5, 2.7: object or null; its shape is not shown). */
export function describeServiceError(error: unknown): string {
  let text: string;
  if (typeof error === 'string') text = error;
  else if (typeof error === 'object' && error !== null) {
    const e = error as Record<string, unknown>;
    const first = [e.message, e.error, e.detail, e.reason, e.code].find((v) => typeof v === 'string');
    text = typeof first === 'string' ? first : JSON.stringify(error);
  } else text = String(error);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
