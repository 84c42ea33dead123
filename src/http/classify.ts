/**
 * Turns an HTTP answer into a parsed body or a BreError with a stable code, per the error tables of the
 * spec (decision spec section 7, account spec section 7). Retry decisions are made from the code.
 */
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import { parseRetryAfter } from '../limits/backoff.js';
import type { HttpResponse } from './transport.js';

const EXCERPT = 160;

/** Links of any scheme: report URLs and pre-signed file URLs are secrets (account spec 2.4, 2.6). */
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\]*/gi;
/** The value (or the start of it, in a body cut short) of a JSON field that holds a secret. */
const SECRET_FIELD =
  /("[^"]*(?:password|token|secret|url|generated_name|signature)[^"]*"\s*:\s*")([^"\\]*(?:\\.[^"\\]*)*)/gi;

/**
 * A short excerpt of a body for an error message. Secrets the body may hold (a retrieve_report answer cut
 * in half still starts with its report_url) are replaced first: error messages go to errors.ndjson.
 */
export function excerpt(text: string): string {
  const flat = text
    .slice(0, EXCERPT * 8)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(SECRET_FIELD, '$1[secret]')
    .replace(URL_PATTERN, '[url]');
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}...` : flat;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `loc` paths of a 422 body, in either service's shape. */
function missingFields(body: unknown): string[] {
  const b = body as { detail?: unknown; error?: { detail?: unknown } } | undefined;
  const list = Array.isArray(b?.detail) ? b?.detail : Array.isArray(b?.error?.detail) ? b?.error?.detail : [];
  return (list as { loc?: unknown[]; msg?: string }[])
    .map((d) => (Array.isArray(d.loc) ? d.loc.filter((p) => p !== 'body').join('.') : ''))
    .filter((s) => s !== '');
}

/** Where a redirect leads, by origin only (a path or query may carry secrets). */
function redirectOrigin(location: string | string[] | undefined): string {
  const l = Array.isArray(location) ? location[0] : location;
  if (!l) return 'nowhere (no Location)';
  try {
    return new URL(l).origin;
  } catch {
    return 'a path on the same origin';
  }
}

export function classifyResponse(service: ServiceName, res: HttpResponse): unknown {
  const { status } = res;
  const body = tryJson(res.text);
  if (status >= 200 && status < 300) {
    if (body === undefined || body === null || typeof body !== 'object') {
      throw new BreError(
        'BAD_RESPONSE',
        `${service} service answered ${status} with a body that is not a JSON object: ${excerpt(res.text)}`,
        { service, status },
      );
    }
    return body;
  }
  if (status >= 300 && status < 400) {
    throw new BreError(
      'REDIRECTED',
      `the ${service} service answered ${status} redirecting to ${redirectOrigin(res.headers.location)}: redirects are not followed (the token must never reach another origin); set the base URL to where the service is`,
      { service, status },
    );
  }
  if (status === 401) {
    throw new BreError(
      'AUTH_REFUSED',
      `the ${service} service refused the credentials (HTTP 401): check BRE_CLIENT_ID and BRE_AUTH_TOKEN (or the file BRE_AUTH_TOKEN_FILE names), and that they belong to the environment of the base URL`,
      { service, status },
    );
  }
  if (status === 403) {
    throw new BreError(
      'IP_NOT_ALLOWED',
      `the ${service} service refused this machine's IP address (HTTP 403 Forbidden): the egress IP must be allow-listed by the provider (check which address this machine goes out from, e.g. behind a NAT or proxy)`,
      { service, status },
    );
  }
  if (status === 429) {
    throw new BreError('RATE_LIMITED', `${service} service answered 429 Too Many Requests`, {
      service,
      status,
      retryAfterSeconds: parseRetryAfter(res.headers['retry-after']),
    });
  }
  if (status === 502 || status === 503 || status === 504) {
    throw new BreError('SERVER_UNAVAILABLE', `${service} service unavailable (HTTP ${status})`, { service, status });
  }
  if (status === 422) {
    const fields = missingFields(body);
    throw new BreError(
      'VALIDATION_FAILED',
      fields.length > 0
        ? `${service} service rejected the request (HTTP 422): missing or invalid ${fields.join(', ')}`
        : `${service} service rejected the request (HTTP 422): ${excerpt(res.text)}`,
      { service, status, field: fields[0], details: fields },
    );
  }
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (
    service === 'account' &&
    detail &&
    typeof detail === 'object' &&
    typeof (detail as { error?: unknown }).error === 'string'
  ) {
    throw new BreError('ACCOUNT_ERROR', `account service: ${(detail as { error: string }).error} (HTTP ${status})`, {
      service,
      status,
    });
  }
  if (status === 500 && typeof detail === 'string') {
    if (service === 'bureau') {
      throw new BreError(
        'BUREAU_DECODE_FAILED',
        `bureau service could not read the report (HTTP 500): ${excerpt(detail)}`,
        { service, status },
      );
    }
    if (service === 'workflow') {
      throw new BreError('WORKFLOW_REJECTED_INPUT', `workflow rejected the input (HTTP 500): ${excerpt(detail)}`, {
        service,
        status,
      });
    }
  }
  if (status >= 500) {
    throw new BreError('SERVER_ERROR', `${service} service error (HTTP ${status}): ${excerpt(res.text)}`, {
      service,
      status,
    });
  }
  const msg = typeof detail === 'string' ? detail : excerpt(res.text);
  throw new BreError('HTTP_ERROR', `${service} service answered HTTP ${status}: ${excerpt(msg)}`, { service, status });
}
