/**
 * The documented retry schedule (decision spec section 8, account spec section 8): base 1 s, doubled after
 * each attempt, capped at 60 s, with +-20% random jitter. A server's Retry-After lengthens it, never shortens
 * it: some gateways answer `Retry-After: 0` while they throttle, and taking that literally sends attempts as fast
 * as the limiter allows into a service that refuses them all (dlt-hub/dlt#4036).
 */
export interface BackoffOptions {
  readonly baseMs?: number;
  readonly capMs?: number;
  readonly jitter?: number;
  readonly random?: () => number;
}

export const DEFAULT_BACKOFF = { baseMs: 1000, capMs: 60_000, jitter: 0.2 } as const;

/** Delay before attempt `attempt + 1`, where `attempt` (from 1) is the attempt that just failed. */
export function backoffDelayMs(attempt: number, retryAfterSeconds?: number, opts: BackoffOptions = {}): number {
  const base = opts.baseMs ?? DEFAULT_BACKOFF.baseMs;
  const cap = opts.capMs ?? DEFAULT_BACKOFF.capMs;
  const jitter = opts.jitter ?? DEFAULT_BACKOFF.jitter;
  const random = opts.random ?? Math.random;
  const raw = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const documented = Math.round(raw * (1 + jitter * (2 * random() - 1)));
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds > 0) {
    return Math.max(documented, Math.min(retryAfterSeconds * 1000, cap));
  }
  return documented;
}

/** Retry-After as seconds: either delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}
