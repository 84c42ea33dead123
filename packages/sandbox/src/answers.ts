/**
 * Every answer the sandbox gives, in each service's own error shape:
 *   - workflow and bureau (decision spec section 7): FastAPI style, `{"detail": ...}`;
 *   - account (account spec section 7): `{"error": {"type", "detail"}}` for 401/422 and the sandbox's
 *     own 413/404/405/503, `{"detail": {"error", "request_id", "user_id"[, "aa_session_id"]}}` for the
 *     endpoints' failures.
 */
import type { ServiceName } from '@bre-batch/core/types';
import type { FieldIssue } from './validate.js';

export interface Answer {
  readonly status: number;
  /** Serialised body. */
  readonly body: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Thrown by handlers deep inside to answer at once (e.g. a 500 for an unexpected input value). */
export class Fail extends Error {
  constructor(readonly answer: Answer) {
    super(`HTTP ${answer.status}`);
  }
}

export function json(status: number, value: unknown, headers?: Record<string, string>): Answer {
  return { status, body: JSON.stringify(value), headers };
}

function accountError(status: number, type: string, detail: unknown): Answer {
  return json(status, { error: { type, detail } });
}

export function unauthorized(service: ServiceName, requestId: string): Answer {
  if (service === 'account') return accountError(401, 'unauthorized', 'Invalid client credentials');
  return json(401, { detail: 'Invalid client credentials', request_id: requestId });
}

export function validationFailed(service: ServiceName | null, issues: readonly FieldIssue[]): Answer {
  if (service === 'account') return accountError(422, 'validation_error', issues);
  return json(422, { detail: issues });
}

export function payloadTooLarge(service: ServiceName | null, limit: number): Answer {
  const detail = `Request body too large: the limit is ${limit} bytes`;
  const a = service === 'account' ? accountError(413, 'payload_too_large', detail) : json(413, { detail });
  return { ...a, headers: { connection: 'close' } };
}

/** 429: body not described by either spec; Retry-After is whole seconds until a slot frees. */
export function tooManyRequests(retryAfterSeconds: number): Answer {
  return json(429, { detail: 'Too Many Requests' }, { 'retry-after': String(retryAfterSeconds) });
}

export function unavailable(service: ServiceName): Answer {
  if (service === 'account') return accountError(503, 'service_unavailable', 'Service Unavailable');
  return json(503, { detail: 'Service Unavailable' });
}

export function notFound(service: ServiceName | null, detail = 'Not Found'): Answer {
  if (service === 'account') return accountError(404, 'not_found', detail);
  return json(404, { detail });
}

export function methodNotAllowed(service: ServiceName | null, allow: string): Answer {
  const a =
    service === 'account'
      ? accountError(405, 'method_not_allowed', 'Method Not Allowed')
      : json(405, { detail: 'Method Not Allowed' });
  return { ...a, headers: { allow } };
}

/** 500 for "input holds unexpected values in a correct format" (decision spec section 7). */
export function unexpectedInput(detail: string): Answer {
  return json(500, { detail });
}

/** A bug in the sandbox itself: never crash, answer 500 in the service's shape. */
export function internalError(service: ServiceName | null): Answer {
  if (service === 'account') return accountError(500, 'internal_error', 'Internal Server Error');
  return json(500, { detail: 'Internal Server Error' });
}

/** AA failures (account spec 7): {detail{error, request_id, user_id, aa_session_id}}. */
export function aaFailure(
  status: number,
  error: string,
  requestId: string,
  userId: string,
  aaSessionId: string,
): Answer {
  return json(status, { detail: { error, request_id: requestId, user_id: userId, aa_session_id: aaSessionId } });
}

/** BSA failures (account spec 7): {detail{error, request_id, user_id}}; user_id 'null' when no session is found. */
export function bsaFailure(status: number, error: string, requestId: string, userId: string): Answer {
  return json(status, { detail: { error, request_id: requestId, user_id: userId } });
}

/** 403 for callers outside the allow-list (both specs: an HTML page titled '403 Forbidden'). */
export const FORBIDDEN: Answer = {
  status: 403,
  contentType: 'text/html; charset=utf-8',
  body:
    '<!DOCTYPE html>\n<html>\n<head><title>403 Forbidden</title></head>\n<body>\n<h1>403 Forbidden</h1>\n' +
    '<p>Requests from this IP address are not allowed.</p>\n</body>\n</html>\n',
};
