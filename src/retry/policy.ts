/**
 * "Try again until a deadline", written once (as Redpanda Connect has one backoff field that every component
 * reuses): the database source (src/input/db/source.ts), the sink's writer and thread (src/output/sink/) and the
 * shared limiter on Redis (src/limits/redis.ts) each say only what counts as retryable, how long to go on and
 * what to say on a loss, a recovery and giving up.
 *
 * The schedule, for all of them: 250 ms after the first failure, doubling, at most 8 s between attempts. The
 * deadline is counted from the first failure of a run of them (a success starts the count again), and the last
 * pause is cut to it, so there is always one attempt at about the deadline before giving up. 8 s bounds how long
 * a component stays idle after what it waits for is back; a shorter cap would only add attempts during an
 * outage that lasts minutes.
 */
import { sleep } from './sleep.js';

/** The pauses between attempts (see the header). */
export const BACKOFF = { firstMs: 250, maxMs: 8000 } as const;

/** The pause before attempt `failures + 1`, `failures` (from 1) failures in. */
export function backoffMs(failures: number): number {
  return Math.min(BACKOFF.maxMs, BACKOFF.firstMs * 2 ** Math.min(Math.max(failures - 1, 0), 16));
}

/** Time for the policy: a test's clock makes the schedule observable without waiting it out. */
export interface RetryClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const realRetryClock: RetryClock = { now: () => Date.now(), sleep };

export interface RetryPolicy {
  /** How long failures may go on, from the first of a run of them, before `giveUp`. */
  readonly forMs: number;
  /** Whether another attempt may succeed (a lost connection: yes; a statement the server refused: no). */
  readonly retryable: (err: unknown) => boolean;
  /** What a failure that is not retryable is thrown as (default: itself). */
  readonly refused?: (err: unknown) => unknown;
  /** What is thrown once `forMs` has passed, given the last failure and the time waited. */
  readonly giveUp: (err: unknown, waitedMs: number) => unknown;
  /** Told at the first failure of a run of them (a line for the person running). */
  readonly onLoss?: (err: unknown) => void;
  /** Told before each pause (a counter of attempts made again). */
  readonly onRetry?: (err: unknown, failures: number) => void;
  /** Told when an attempt succeeds after failures. */
  readonly onRecovery?: (failures: number) => void;
  readonly clock?: RetryClock;
  /** Ends a pause at once; the signal's reason is thrown. */
  readonly signal?: AbortSignal;
}

/**
 * `attempt` until it succeeds, a failure is not retryable, or failures have gone on for `forMs`. `attempt` is
 * given how many failures came before it (0 first).
 */
export async function retrying<T>(policy: RetryPolicy, attempt: (failures: number) => Promise<T>): Promise<T> {
  const clock = policy.clock ?? realRetryClock;
  let since: number | undefined;
  for (let failures = 0; ; ) {
    let out: T;
    try {
      out = await attempt(failures);
    } catch (err) {
      if (!policy.retryable(err)) throw policy.refused ? policy.refused(err) : err;
      const now = clock.now();
      since ??= now;
      const waited = now - since;
      if (waited >= policy.forMs) throw policy.giveUp(err, waited);
      failures += 1;
      if (failures === 1) policy.onLoss?.(err);
      policy.onRetry?.(err, failures);
      await clock.sleep(Math.min(backoffMs(failures), policy.forMs - waited), policy.signal);
      continue;
    }
    if (failures > 0) policy.onRecovery?.(failures);
    return out;
  }
}
