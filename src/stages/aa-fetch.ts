/**
 * Stage kind `aa_fetch`: POST /aa/fetch_data (account spec 4.1), once per consent handle. Its input columns
 * (user_id, aa_session_id, the date range, the consent handles) and options: `aaFetchKind`.
 */
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { AA_FETCH_COLUMNS, normaliseAaFetch } from '../normalise/account-summary.js';
import {
  formatAaDateTime,
  parseRangeDate,
  rangeExceedsMonths,
  wallMillis,
  type Bound,
  type WallClock,
} from '../services/account/aa-dates.js';
import { HANDLES_EXPECTED, isUuid, splitHandles, uniqueHandles } from '../services/account/consent.js';
import { findColumn } from '../services/account/row.js';
import { expectObject, readSession } from '../services/account/session.js';
import type { InputRow, JsonObject } from '@bre-batch/core/types';
import { registerStageKind } from './registry.js';
import type { FieldError, PrepareResult } from '../input/validation.js';
import type { StageKind } from './types.js';

const optionsSchema = z.strictObject({
  generate_insights: z.boolean().default(true),
  max_range_months: z.number().int().min(1).max(120).default(6),
});
export type AaFetchOptions = Readonly<z.infer<typeof optionsSchema>>;

export interface AaFetchPrepared {
  /** One fetch_data body per consent handle (one body without a handle in a single-consent flow). */
  readonly bodies: readonly JsonObject[];
}

const AA_FETCH_PATH = '/aa/fetch_data';

const COLUMN_NAMES: Record<Bound, readonly string[]> = {
  from: ['date_from', 'datetimerangefrom'],
  to: ['date_to', 'datetimerangeto'],
};

function readBound(row: InputRow, bound: Bound, errors: FieldError[]): { wall: WallClock; column: string } | undefined {
  const [iso, api] = COLUMN_NAMES[bound];
  const found = findColumn(row.data, COLUMN_NAMES[bound]);
  if (!found) {
    const expected = `${iso} (ISO date or datetime) or ${api} (MM/DD/YYYY HH:MM:SS AM/PM)`;
    errors.push({ field: iso, expected, message: `Expected ${expected}, got nothing` });
    return undefined;
  }
  const parsed = parseRangeDate(found.value, bound);
  if (!parsed.ok) {
    const got = typeof found.value === 'string' ? JSON.stringify(found.value.slice(0, 40)) : `a ${typeof found.value}`;
    errors.push({
      field: found.column,
      expected: parsed.expected,
      message: `Expected ${found.column}: ${parsed.expected}, got ${got}`,
    });
    return undefined;
  }
  return { wall: parsed.wall, column: found.column };
}

function readHandles(row: InputRow, errors: FieldError[]): string[] {
  const handles: string[] = [];
  for (const column of ['consent_handle', 'consent_handles']) {
    const found = findColumn(row.data, [column]);
    if (!found) continue;
    const split = splitHandles(found.value);
    if (!split.ok) {
      errors.push({
        field: found.column,
        expected: split.expected,
        message: `Expected ${found.column}: ${split.expected}, got ${split.got}`,
      });
      continue;
    }
    for (const h of split.handles) {
      if (isUuid(h)) {
        handles.push(h);
        continue;
      }
      const got = JSON.stringify(h.length > 40 ? `${h.slice(0, 37)}...` : h);
      errors.push({
        field: found.column,
        expected: 'a UUID',
        message: `Expected ${found.column}: a UUID (${HANDLES_EXPECTED}), got ${got}`,
      });
    }
  }
  return uniqueHandles(handles);
}

/**
 * Input columns:
 * - user_id, aa_session_id (required).
 * - date_from, date_to: ISO date (`2024-01-31`) or datetime (`2024-01-31T18:30:00`); a date alone means
 *   00:00:00 for date_from and 23:59:59 for date_to (inclusive). The API's own columns datetimerangefrom /
 *   datetimerangeto in `MM/DD/YYYY HH:MM:SS AM/PM` are accepted instead (either form in either column).
 *   Times are sent as written; an ISO offset is dropped, not converted (the API form has no zone).
 * - consent_handle (one UUID) and/or consent_handles (several UUIDs separated by `;`, `|` or `,`, or a JSON
 *   array in NDJSON): multi-consent flow, one call per distinct handle, results merged with the accounts
 *   kept apart. No handle: single-consent flow, one call without consent_handle.
 *
 * Options (pipeline file): generate_insights (default true), max_range_months (default 6: spec 8 says the
 * service works well up to 6 months; a longer range is a warning, not an error).
 */
export const aaFetchKind: StageKind<AaFetchOptions, AaFetchPrepared> = {
  kind: 'aa_fetch',
  service: 'account',
  // One call per consent handle in the row: callsPerRow keeps the default 1, the common case.
  producesTransactions: true,
  description: 'AA transactions: POST /aa/fetch_data (one call per consent handle in multi-consent flows)',
  optionsSchema,
  columns: () => ({
    required: ['user_id', 'aa_session_id', 'date_from', 'date_to'],
    alternatives: { date_from: ['datetimerangefrom'], date_to: ['datetimerangeto'] },
    optional: ['consent_handle', 'consent_handles', 'datetimerangefrom', 'datetimerangeto'],
    conditional: {
      consent_handles: 'multi-consent flows: several UUIDs separated by ";" or "|" (or a JSON array); one call each',
      datetimerangefrom: 'instead of date_from, in the API form MM/DD/YYYY HH:MM:SS AM/PM',
      datetimerangeto: 'instead of date_to, in the API form MM/DD/YYYY HH:MM:SS AM/PM',
    },
  }),
  resultFields: () => AA_FETCH_COLUMNS,

  async prepare(row, stage, ctx): Promise<PrepareResult<AaFetchPrepared>> {
    const errors: FieldError[] = [];
    const session = readSession(row, errors);
    const from = readBound(row, 'from', errors);
    const to = readBound(row, 'to', errors);
    const handles = readHandles(row, errors);
    if (from && to && wallMillis(from.wall) >= wallMillis(to.wall)) {
      const expected = `a ${to.column} later than ${from.column}`;
      errors.push({
        field: to.column,
        expected,
        message: `Expected ${expected}, got ${from.column} ${formatAaDateTime(from.wall)} and ${to.column} ${formatAaDateTime(to.wall)}`,
      });
    }
    if (errors.length > 0 || !from || !to) return { ok: false, errors };
    const months = stage.options.max_range_months;
    if (rangeExceedsMonths(from.wall, to.wall, months)) {
      ctx.warn(
        `AA date range ${formatAaDateTime(from.wall)} to ${formatAaDateTime(to.wall)} is longer than ${months} months; ` +
          'the service works well up to 6 months (account spec 8)',
        row,
      );
    }
    const base: JsonObject = {
      user_id: session.user_id,
      aa_session_id: session.aa_session_id,
      datetimerangefrom: formatAaDateTime(from.wall),
      datetimerangeto: formatAaDateTime(to.wall),
      generate_insights: stage.options.generate_insights,
    };
    const bodies = handles.length === 0 ? [base] : handles.map((h) => ({ ...base, consent_handle: h }));
    return { ok: true, value: { bodies } };
  },

  async execute(prepared, call) {
    const responses: unknown[] = [];
    for (const body of prepared.bodies) {
      const answer = await call(AA_FETCH_PATH, body);
      const obj = expectObject(answer.body, AA_FETCH_PATH);
      // 2.2: `success` says whether the request succeeded; a 200 with success=false carries no usable data.
      if (obj.success === false) {
        throw new BreError(
          'ACCOUNT_ERROR',
          `AA fetch_data answered success=false${prepared.bodies.length > 1 ? ' for one of the consent handles' : ''}`,
          { service: 'account', status: answer.status, details: { calls: responses.length + 1 } },
        );
      }
      responses.push(obj);
    }
    const { result, transactions } = normaliseAaFetch(responses);
    return { result, transactions, calls: prepared.bodies.length };
  },
};

registerStageKind(aaFetchKind);
