/**
 * Retry: the outermost layer. A failed attempt whose code is retryable (../../errors.ts) is tried again after
 * the documented backoff, or the server's Retry-After (../../limits/backoff.ts), up to --max-attempts. Being
 * outermost, each attempt goes through the limiter again, and the sleep before it holds no limiter slot.
 * The sleep gives up at once when the run stops taking work.
 */
import { BreError, isRetryable, toBreError } from '../../errors.js';
import { backoffDelayMs } from '../../limits/backoff.js';
import type { Meter } from './measure.js';
import type { Attempt, Dispatch } from './types.js';

export interface RetryOptions {
  readonly maxAttempts: number;
  readonly signal: AbortSignal;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  /** Counts retries and the time slept before them. */
  readonly meter: Meter;
}

/** What a call resolves to once an attempt succeeded. */
export interface Retried {
  readonly body: unknown;
  /** Attempts it took, retries included. */
  readonly attempts: number;
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal.reason); };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function retry(opts: RetryOptions): (next: Dispatch<unknown>) => Dispatch<Retried> {
  const { maxAttempts, signal, sleep, random, meter } = opts;
  return (next) => async (first) => {
    const { service } = first;
    for (let a: Attempt = first; ; a = { ...a, number: a.number + 1 }) {
      try {
        return { body: await next(a), attempts: a.number };
      } catch (err) {
        const e = toBreError(err, 'NETWORK');
        if (!isRetryable(e) || a.number >= maxAttempts || signal.aborted) throw e.with({ attempts: a.number, service });
        meter.retry(a);
        const delay = backoffDelayMs(a.number, e.retryAfterSeconds, { random });
        const slept = performance.now();
        try {
          await sleep(delay, signal);
        } catch {
          throw new BreError('INTERRUPTED', `${service} call abandoned while waiting to retry: the run is stopping`, { service, attempts: a.number });
        } finally {
          meter.waited(service, performance.now() - slept);
        }
      }
    }
  };
}
