/**
 * Retry: the outermost layer. A failed attempt whose code is retryable (packages/core/src/errors.ts) is tried again
 * after the documented backoff, or a longer Retry-After (../../limits/backoff.ts), up to --max-attempts. Being
 * outermost, each attempt goes through the limiter again, and the sleep before it holds no limiter slot.
 * The sleep gives up at once when the run stops taking work.
 *
 * A 429 is the service's state, never the call's fault: it does not count against --max-attempts,
 * so a row waiting on a throttling service stays pending however many attempts that takes, and it sleeps
 * nothing here: the whole service pauses for the documented back-off of the spell (the limit layer,
 * ../../limits/throttle.ts), which every call waits out before its next attempt. How long the service may go on
 * refusing is --throttle-deadline's to say (THROTTLED, the limit layer).
 */
import { BreError, isRetryable, toBreError } from '@bre-batch/core/errors';
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

export function retry(opts: RetryOptions): (next: Dispatch<unknown>) => Dispatch<Retried> {
  const { maxAttempts, signal, sleep, random, meter } = opts;
  return (next) => async (first) => {
    const { service } = first;
    // Attempts that count against --max-attempts: every one but those answered 429.
    let counted = 0;
    for (let a: Attempt = first; ; a = { ...a, number: a.number + 1 }) {
      try {
        return { body: await next(a), attempts: a.number };
      } catch (err) {
        const e = toBreError(err, 'NETWORK');
        const throttled = e.code === 'RATE_LIMITED';
        if (!throttled) counted += 1;
        if (!isRetryable(e) || counted >= maxAttempts || signal.aborted) throw e.with({ attempts: a.number, service });
        meter.retry(a);
        if (throttled) continue;
        const delay = backoffDelayMs(counted, e.retryAfterSeconds, { random });
        const slept = performance.now();
        try {
          await sleep(delay, signal);
        } catch {
          throw new BreError('INTERRUPTED', `${service} call abandoned while waiting to retry: the run is stopping`, {
            service,
            attempts: a.number,
          });
        } finally {
          meter.waited(service, performance.now() - slept);
        }
      }
    }
  };
}
