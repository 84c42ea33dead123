/**
 * Stage kind `bsa_fetch`: the BSA order of spec 4 — POST /bsa/status_check until ready_for_fetch_data,
 * optionally /bsa/fetch_uploaded, then /bsa/fetch_data (4.3-4.5). Input columns: user_id, aa_session_id.
 * How it polls, and what fetch_uploaded keeps: `bsaFetchKind`.
 */
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { BSA_FETCH_COLUMNS, normaliseBsaFetch } from '../normalise/account-summary.js';
import { pollUntilReady, type PollClock, type PollOutcome } from '../services/account/poll.js';
import { sleep } from '../retry/sleep.js';
import { scrubSecrets } from '../services/account/secrets.js';
import { describeServiceError, expectObject, readSession, type AccountSession } from '../services/account/session.js';
import { resultFields, type Json, type JsonObject } from '@bre-batch/core/types';
import { registerStageKind } from './registry.js';
import type { FieldError, PrepareResult } from '../input/validation.js';
import type { SecretValue } from '@bre-batch/core/types';
import type { ServiceCall, StageKind } from './types.js';

/**
 * Options: poll_interval_ms (1000), poll_max_interval_ms (10000), ready_timeout_ms (120000), fetch_uploaded
 * (false), generate_insights (true). Polling: each status_check is its own call (through the limiter); waits
 * start at poll_interval_ms and double up to poll_max_interval_ms; after ready_timeout_ms the row fails with
 * NOT_READY (a later `--retry-errors` picks it up); status 'failed' or a non-null `error` fails the row with
 * ACCOUNT_ERROR; the run stopping (ctx.signal) ends the wait at once with INTERRUPTED. fetch_uploaded: file
 * `url`, `file_password` and `generated_name` are secrets (2.6) and go only to StageOutput.secrets as
 * `file.<n>.url`, `file.<n>.file_password`, `file.<n>.generated_name`; the result keeps `files_count` and
 * `file_names` (the user's file names).
 */
const optionsSchema = z.strictObject({
  poll_interval_ms: z.number().int().min(1).default(1000),
  poll_max_interval_ms: z.number().int().min(1).default(10_000),
  ready_timeout_ms: z.number().int().min(0).default(120_000),
  fetch_uploaded: z.boolean().default(false),
  generate_insights: z.boolean().default(true),
});
export type BsaFetchOptions = Readonly<z.infer<typeof optionsSchema>>;

export interface BsaFetchPrepared {
  readonly session: AccountSession;
  readonly generate_insights: boolean;
  readonly fetch_uploaded: boolean;
}

const BSA_PATHS = {
  status: '/bsa/status_check',
  uploaded: '/bsa/fetch_uploaded',
  data: '/bsa/fetch_data',
} as const;

/** The failure a BSA answer reports in-band (2.5, 2.7): status 'failed' or a non-null error object. */
function failure(body: Record<string, unknown>): string | undefined {
  const failed = typeof body.status === 'string' && body.status.toLowerCase() === 'failed';
  if (body.error !== null && body.error !== undefined) return describeServiceError(body.error);
  return failed ? "status 'failed'" : undefined;
}

function statusText(body: Record<string, unknown>): string {
  return typeof body.status === 'string' ? body.status.slice(0, 40) : 'none';
}

interface Uploaded {
  readonly result: Record<string, Json>;
  readonly secrets: SecretValue[];
}

/** fetch_uploaded answer (2.6): counts and names in the result, the rest in secrets. */
function splitUploaded(body: Record<string, unknown>): Uploaded {
  const files = Array.isArray(body.files) ? body.files : [];
  const names: Json[] = [];
  const secrets: SecretValue[] = [];
  files.forEach((raw, i) => {
    const f = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    if (typeof f.name === 'string') names.push(f.name);
    for (const key of ['url', 'file_password', 'generated_name'] as const) {
      const v = f[key];
      if (typeof v === 'string' && v !== '') secrets.push({ name: `file.${i + 1}.${key}`, value: v });
    }
  });
  return { result: { files_count: files.length, file_names: names }, secrets };
}

export const bsaFetchKind: StageKind<BsaFetchOptions, BsaFetchPrepared> = {
  kind: 'bsa_fetch',
  service: 'account',
  producesTransactions: true,
  // status_check until ready (at least once), fetch_uploaded when asked, then fetch_data (spec 4.3-4.5).
  callsPerRow: (stage) => 2 + (stage.options.fetch_uploaded ? 1 : 0),
  description: 'BSA transactions: /bsa/status_check until ready, optional /bsa/fetch_uploaded, then /bsa/fetch_data',
  optionsSchema,
  checkConfig: (stage) =>
    stage.options.poll_max_interval_ms < stage.options.poll_interval_ms
      ? [
          `Expected poll_max_interval_ms >= poll_interval_ms, got ${stage.options.poll_max_interval_ms} < ${stage.options.poll_interval_ms}`,
        ]
      : [],
  columns: () => ({ required: ['user_id', 'aa_session_id'], optional: [], conditional: {} }),
  resultFields: (stage) => [
    ...resultFields('int64', 'status_checks'),
    ...(stage.options.fetch_uploaded
      ? [...resultFields('int64', 'files_count'), ...resultFields('json', 'file_names')]
      : []),
    ...BSA_FETCH_COLUMNS,
  ],

  async prepare(row, stage): Promise<PrepareResult<BsaFetchPrepared>> {
    const errors: FieldError[] = [];
    const session = readSession(row, errors);
    if (errors.length > 0) return { ok: false, errors };
    return {
      ok: true,
      value: {
        session,
        generate_insights: stage.options.generate_insights,
        fetch_uploaded: stage.options.fetch_uploaded,
      },
    };
  },

  async execute(prepared, call: ServiceCall, stage, ctx) {
    const ids: JsonObject = { user_id: prepared.session.user_id, aa_session_id: prepared.session.aa_session_id };
    const o = stage.options;
    let calls = 0;
    const withCalls = (err: unknown): never => {
      // Keeps the count of calls made in the error (summary.json counts them) without touching its code.
      if (err instanceof BreError && err.details === undefined) throw err.with({ details: { calls } });
      throw err;
    };

    const poll = async (): Promise<PollOutcome<true>> => {
      calls += 1;
      const answer = await call(BSA_PATHS.status, ids);
      const body = expectObject(answer.body, BSA_PATHS.status);
      const failed = failure(body);
      if (failed !== undefined) {
        throw new BreError('ACCOUNT_ERROR', `BSA processing failed: ${failed}`, {
          service: 'account',
          status: answer.status,
          details: { calls },
        });
      }
      return body.ready_for_fetch_data === true
        ? { state: 'ready', value: true }
        : { state: 'pending', status: statusText(body) };
    };
    // The deadline follows the run's clock (ctx.now); waits are real timers cut short by ctx.signal.
    const clock: PollClock = { now: () => ctx.now().getTime(), sleep };
    const polled = await pollUntilReady(
      poll,
      { intervalMs: o.poll_interval_ms, maxIntervalMs: o.poll_max_interval_ms, timeoutMs: o.ready_timeout_ms },
      ctx.signal,
      clock,
    ).catch(withCalls);

    let uploaded: Uploaded | undefined;
    if (prepared.fetch_uploaded) {
      calls += 1;
      const answer = await call(BSA_PATHS.uploaded, ids).catch(withCalls);
      uploaded = splitUploaded(expectObject(answer.body, BSA_PATHS.uploaded));
    }

    calls += 1;
    const answer = await call(BSA_PATHS.data, { ...ids, generate_insights: prepared.generate_insights }).catch(
      withCalls,
    );
    const body = expectObject(answer.body, BSA_PATHS.data);
    const failed = failure(body);
    if (failed !== undefined) {
      throw new BreError('ACCOUNT_ERROR', `BSA fetch_data reported a failure: ${failed}`, {
        service: 'account',
        status: answer.status,
        details: { calls },
      });
    }
    const { result, transactions } = normaliseBsaFetch(body);
    const secrets = uploaded?.secrets ?? [];
    const merged: Record<string, Json> = { status_checks: polled.polls, ...(uploaded?.result ?? {}), ...result };
    return {
      result: scrubSecrets(merged, secrets),
      transactions,
      secrets: secrets.length > 0 ? secrets : undefined,
      calls,
    };
  },
};

registerStageKind(bsaFetchKind);
