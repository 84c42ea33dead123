/**
 * Stage kind `aa_report`: POST /aa/retrieve_report (account spec 4.2, 2.4).
 *
 * The report link is a secret (CONTRACT: report URLs never appear in any output or log): it goes only to
 * StageOutput.secrets as `report_url`, expiring 7 days after the call (spec 4.2, 8). The result holds
 * `report_available`, `report_url_expires_at` and `request_id`, plus the insights subset (2.3: user_id,
 * request_id, bank_name, account_number masked) as `insights.<field>` without personal fields.
 *
 * Input columns: user_id, aa_session_id; optional fetch_current_report (true/false) overriding the option.
 * Options: generate_insights (default true), fetch_current_report (default false: re-fetching a recurring
 * consent's latest transactions is a choice, not a default).
 */
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { flattenInsights } from '../normalise/account-summary.js';
import { readBoolean } from '../services/account/row.js';
import { scrubSecrets } from '../services/account/secrets.js';
import { expectObject, readSession } from '../services/account/session.js';
import { resultFields, type Json, type JsonObject } from '@bre-batch/core/types';
import { registerStageKind } from './registry.js';
import type { FieldError, PrepareResult } from '../input/validation.js';
import type { SecretValue } from '@bre-batch/core/types';
import type { StageKind } from './types.js';

const optionsSchema = z.strictObject({
  generate_insights: z.boolean().default(true),
  fetch_current_report: z.boolean().default(false),
});
export type AaReportOptions = Readonly<z.infer<typeof optionsSchema>>;

export interface AaReportPrepared {
  readonly body: JsonObject;
}

const AA_REPORT_PATH = '/aa/retrieve_report';
/** Spec 4.2 / 8: the link stays valid 7 days. */
const REPORT_LINK_VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;

export const aaReportKind: StageKind<AaReportOptions, AaReportPrepared> = {
  kind: 'aa_report',
  service: 'account',
  description: 'AA transactions report: POST /aa/retrieve_report (the link is kept in secrets.ndjson only)',
  optionsSchema,
  columns: () => ({ required: ['user_id', 'aa_session_id'], optional: ['fetch_current_report'], conditional: {} }),
  resultFields: () => [
    ...resultFields('boolean', 'report_available'),
    ...resultFields(
      'string',
      'report_url_expires_at',
      'request_id',
      'insights.user_id',
      'insights.request_id',
      'insights.bank_name',
      'insights.account_number',
    ),
  ],

  async prepare(row, stage): Promise<PrepareResult<AaReportPrepared>> {
    const errors: FieldError[] = [];
    const session = readSession(row, errors);
    const current = readBoolean(row.data, 'fetch_current_report');
    if (!current.ok) {
      errors.push({
        field: current.column,
        expected: 'true or false',
        message: `Expected ${current.column}: true or false, got ${current.got}`,
      });
    }
    if (errors.length > 0) return { ok: false, errors };
    return {
      ok: true,
      value: {
        body: {
          user_id: session.user_id,
          aa_session_id: session.aa_session_id,
          generate_insights: stage.options.generate_insights,
          fetch_current_report: (current.ok ? current.value : undefined) ?? stage.options.fetch_current_report,
        },
      },
    };
  },

  async execute(prepared, call, _stage, ctx) {
    const answer = await call(AA_REPORT_PATH, prepared.body);
    const body = expectObject(answer.body, AA_REPORT_PATH);
    const url = body.report_url;
    if (typeof url !== 'string' || url.trim() === '') {
      throw new BreError('BAD_RESPONSE', 'Expected a report_url string in the retrieve_report answer, got none', {
        service: 'account',
        status: answer.status,
        details: { calls: 1 },
      });
    }
    const expiresAt = new Date(ctx.now().getTime() + REPORT_LINK_VALIDITY_MS).toISOString();
    const secrets: SecretValue[] = [{ name: 'report_url', value: url, expiresAt }];
    const result: Record<string, Json> = {
      report_available: true,
      report_url_expires_at: expiresAt,
      request_id: typeof body.request_id === 'string' ? body.request_id : null,
    };
    flattenInsights(result, 'insights', body.insights);
    return { result: scrubSecrets(result, secrets), secrets, calls: 1 };
  },
};

registerStageKind(aaReportKind);
