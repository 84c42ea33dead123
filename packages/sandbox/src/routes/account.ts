/**
 * The account transaction service (account spec section 4): AA fetch_data and retrieve_report, BSA
 * status_check, fetch_uploaded and fetch_data. Session behaviour is steered by magic substrings of
 * aa_session_id (see ../logic/sessions.ts). The sandbox's choices where the spec is silent:
 *   - unknown AA session: 404; unknown BSA session: 404 (status_check too, same message as fetch_data);
 *   - bad AA date format / range, missing consent_handle of a multi-consent session: 400;
 *   - BSA fetch_data before ready (never checked, processing, stuck) or of a failed session: 409.
 */
import { randomBytes } from 'node:crypto';
import { Fail, aaFailure, bsaFailure, json, validationFailed, type Answer } from '../answers.js';
import { aaBodyElement, aaInsights, bsaServiceResponse, reportCsv } from '../logic/account-shapes.js';
import { hexId, uuidFrom } from '../logic/hash.js';
import {
  aaAccount,
  bsaAccounts,
  bsaPeriod,
  hasNoFiles,
  isFailing,
  isMultiConsent,
  isStuck,
  isUnknownSession,
} from '../logic/sessions.js';
import { DAY_MS, formatAaDateTime, istIso, istIsoNoOffset, parseAaDateTime } from '../logic/time.js';
import { monthsBefore, transactionsBetween } from '../logic/transactions.js';
import { Validator } from '../validate.js';
import type { AccountState, Handler, ReportLink, RouteContext } from './context.js';

const LOC = ['body'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REPORT_TTL_MS = 7 * DAY_MS;
const MSG_NO_AA = 'no aa session found for this user and aa_session_id';
const MSG_NO_BSA = 'no bsa sessions found for this user and aa_session_id';
const MSG_NO_FILES = 'no valid uploaded files found for this user and aa_session_id';

function session(ctx: RouteContext, extra: (v: Validator) => void = () => {}): { userId: string; sessionId: string } {
  const v = new Validator();
  const userId = v.str(ctx.body, 'user_id', LOC, true, { maxLength: 64 });
  const sessionId = v.str(ctx.body, 'aa_session_id', LOC);
  extra(v);
  if (!v.ok) throw new Fail(validationFailed('account', v.issues));
  return { userId: userId!, sessionId: sessionId! };
}

const key = (userId: string, sessionId: string) => `${userId}\u0000${sessionId}`;

export const aaFetchData: Handler = (ctx) => {
  let fromText: string | undefined,
    toText: string | undefined,
    handle: string | undefined,
    insights: boolean | undefined;
  const { userId, sessionId } = session(ctx, (v) => {
    fromText = v.str(ctx.body, 'datetimerangefrom', LOC);
    toText = v.str(ctx.body, 'datetimerangeto', LOC);
    handle = v.str(ctx.body, 'consent_handle', LOC, false);
    insights = v.bool(ctx.body, 'generate_insights', LOC, false);
  });
  const fail = (status: number, error: string): Answer => aaFailure(status, error, ctx.requestId, userId, sessionId);
  if (isUnknownSession(sessionId)) return fail(404, MSG_NO_AA);
  const from = parseAaDateTime(fromText!);
  if (from === null)
    return fail(400, `datetimerangefrom must be in the format MM/DD/YYYY HH:MM:SS AM/PM, got '${fromText}'`);
  const to = parseAaDateTime(toText!);
  if (to === null) return fail(400, `datetimerangeto must be in the format MM/DD/YYYY HH:MM:SS AM/PM, got '${toText}'`);
  if (to <= from) return fail(400, 'datetimerangeto must be later than datetimerangefrom');
  const multi = isMultiConsent(sessionId);
  if (multi && handle === undefined) return fail(400, 'consent_handle is required for a multi-consent session');
  if (handle !== undefined && !UUID.test(handle)) return fail(400, `consent_handle must be a UUID, got '${handle}'`);

  const acc = aaAccount(userId, sessionId, multi ? handle : undefined);
  const txns = transactionsBetween(acc, from, Math.min(to, ctx.now));
  const k = key(userId, sessionId);
  const prev = ctx.state.aaFetches.get(k);
  const handles = new Set(prev?.handles ?? []);
  if (multi) handles.add(handle!.toLowerCase());
  ctx.state.remember(ctx.state.aaFetches, k, { from, to, handles });

  const consentId = uuidFrom(`${acc.key}|consent`);
  const body: Record<string, unknown> = {
    user_id: userId,
    request_id: ctx.requestId,
    aa_session_id: sessionId,
    success: true,
    service: 'sandbox_aa',
    service_response: {
      consent_status: 'ACCEPTED',
      consent_id: consentId,
      fi_request_status: 'ready',
      fetched_data: {
        header: { channelId: 'sandbox', rid: uuidFrom(`${ctx.requestId}|rid`), ts: istIso(ctx.now) },
        body: [aaBodyElement(acc, txns, from, to, ctx.now, consentId)],
      },
    },
  };
  if (insights) body.insights = aaInsights(acc, userId, ctx.requestId, to, ctx.now);
  return json(200, body);
};

export const aaRetrieveReport: Handler = (ctx) => {
  let insights: boolean | undefined, current: boolean | undefined;
  const { userId, sessionId } = session(ctx, (v) => {
    insights = v.bool(ctx.body, 'generate_insights', LOC, false);
    current = v.bool(ctx.body, 'fetch_current_report', LOC, false);
  });
  if (isUnknownSession(sessionId)) return aaFailure(404, MSG_NO_AA, ctx.requestId, userId, sessionId);
  const last = ctx.state.aaFetches.get(key(userId, sessionId));
  const multi = isMultiConsent(sessionId);
  if (multi && (!last || last.handles.size === 0)) {
    return aaFailure(
      404,
      'no fetched transactions found for this user and aa_session_id: call /aa/fetch_data for each consent first',
      ctx.requestId,
      userId,
      sessionId,
    );
  }
  // Without an earlier fetch, the report covers the last 6 months; fetch_current_report extends it to now.
  const from = last?.from ?? monthsBefore(ctx.now, 6);
  const to = current || !last ? ctx.now : last.to;
  const token = randomBytes(18).toString('hex');
  const link: ReportLink = { userId, sessionId, issuedAt: ctx.now, from, to, handles: multi ? [...last!.handles] : [] };
  ctx.state.remember(ctx.state.reports, token, link);
  const body: Record<string, unknown> = {
    report_url: `${ctx.baseUrl}/__reports/${token}.csv`,
    request_id: ctx.requestId,
  };
  if (insights) {
    const acc = aaAccount(userId, sessionId, link.handles[0]);
    body.insights = {
      user_id: userId,
      request_id: ctx.requestId,
      bank_name: acc.bankName,
      account_number: acc.maskedAccNumber,
    };
  }
  return json(200, body);
};

/** GET /__reports/<token>.csv: the CSV, 404 for an unknown token, 410 once 7 days (sandbox clock) have passed. */
export function serveReport(state: AccountState, token: string, now: number): Answer {
  const link = state.reports.get(token);
  if (!link) return json(404, { detail: 'report not found' });
  if (now - link.issuedAt >= REPORT_TTL_MS)
    return json(410, { detail: 'the report link has expired: call /aa/retrieve_report again for a new link' });
  const handles = link.handles.length > 0 ? link.handles : [undefined];
  const rows = handles.map((h) => {
    const acc = aaAccount(link.userId, link.sessionId, h);
    return { acc, txns: transactionsBetween(acc, link.from, Math.min(link.to, now)) };
  });
  return {
    status: 200,
    body: reportCsv(rows),
    contentType: 'text/csv; charset=utf-8',
    headers: {
      'content-disposition': `attachment; filename="transactions_${formatAaDateTime(link.issuedAt).slice(0, 10).replace(/\//g, '-')}.csv"`,
    },
  };
}

type BsaState = 'processing' | 'completed' | 'failed';

function bsaState(
  ctx: RouteContext,
  userId: string,
  sessionId: string,
  start: boolean,
): { state: BsaState; started?: number } {
  const k = key(userId, sessionId);
  let started = ctx.state.bsaStarted.get(k);
  if (started === undefined && start) {
    started = ctx.now;
    ctx.state.remember(ctx.state.bsaStarted, k, started);
  }
  if (started === undefined || isStuck(sessionId) || ctx.now - started < ctx.bsaReadyAfterMs)
    return { state: 'processing', started };
  return { state: isFailing(sessionId) ? 'failed' : 'completed', started };
}

const FAILURE_MESSAGE = 'statement analysis failed: the uploaded statement could not be parsed';

export const bsaStatusCheck: Handler = (ctx) => {
  const { userId, sessionId } = session(ctx);
  if (isUnknownSession(sessionId)) return bsaFailure(404, MSG_NO_BSA, ctx.requestId, 'null');
  const { state } = bsaState(ctx, userId, sessionId, true);
  return json(200, {
    request_id: ctx.requestId,
    user_id: userId,
    aa_session_id: sessionId,
    ready_for_fetch_data: state === 'completed',
    status: state,
    error: state === 'failed' ? { message: FAILURE_MESSAGE } : null,
  });
};

export const bsaFetchUploaded: Handler = (ctx) => {
  const { userId, sessionId } = session(ctx);
  if (isUnknownSession(sessionId)) return bsaFailure(404, MSG_NO_FILES, ctx.requestId, 'null');
  if (hasNoFiles(sessionId)) return bsaFailure(404, MSG_NO_FILES, ctx.requestId, userId);
  const uploadedAt = (ctx.state.bsaStarted.get(key(userId, sessionId)) ?? ctx.now) - 5 * 60_000;
  const expires = Math.floor(ctx.now / 1000) + 3600;
  const files = bsaAccounts(userId, sessionId).map((acc, i) => {
    const generated = `${hexId(`${acc.key}|file`, 32)}.pdf`;
    return {
      name: `bank_statement_${i + 1}.pdf`,
      generated_name: generated,
      uploaded_at: istIsoNoOffset(uploadedAt),
      file_password: i === 0 ? '' : hexId(`${acc.key}|pw`, 8),
      url: `${ctx.baseUrl}/__files/${generated}?X-Sandbox-Expires=${expires}&X-Sandbox-Signature=${hexId(`${generated}|${expires}`, 40)}`,
    };
  });
  return json(200, { request_id: ctx.requestId, user_id: userId, aa_session_id: sessionId, files });
};

export const bsaFetchData: Handler = (ctx) => {
  const { userId, sessionId } = session(ctx, (v) => {
    v.bool(ctx.body, 'generate_insights', LOC, false);
  });
  if (isUnknownSession(sessionId)) return bsaFailure(404, MSG_NO_BSA, ctx.requestId, 'null');
  const { state, started } = bsaState(ctx, userId, sessionId, false);
  if (state === 'processing') return bsaFailure(409, 'bsa session is not ready for fetch_data', ctx.requestId, userId);
  if (state === 'failed')
    return bsaFailure(409, `bsa session is not ready for fetch_data: ${FAILURE_MESSAGE}`, ctx.requestId, userId);
  const { from, to } = bsaPeriod(started!);
  const accounts = bsaAccounts(userId, sessionId).map((acc) => ({ acc, txns: transactionsBetween(acc, from, to) }));
  return json(200, {
    request_id: ctx.requestId,
    user_id: userId,
    aa_session_id: sessionId,
    status: 'completed',
    error: null,
    service_response: bsaServiceResponse(accounts, from, to, key(userId, sessionId)),
  });
};

/** End of the statement period of a BSA session, for bank_bre's bank_bsa mode. */
export function bsaStatementEnd(state: AccountState, userId: string, sessionId: string, now: number): number {
  return state.bsaStarted.get(key(userId, sessionId)) ?? now;
}
