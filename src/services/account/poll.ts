/**
 * Polling BSA status_check until `ready_for_fetch_data` (spec 3: fetch_data only after status_check reports
 * ready; 4.3). Each poll is a new call through the service's limiter; between polls we wait with a doubling
 * interval. Giving up at the time limit is not a failure of the session: the row gets NOT_READY and a later
 * `--retry-errors` run polls again.
 */
import { BreError } from '@bre-batch/core/errors';
import { sleep } from '../../retry/sleep.js';

export interface PollOptions {
  /** First wait between polls (ms). */
  readonly intervalMs: number;
  /** The wait doubles after each poll up to this (ms). */
  readonly maxIntervalMs: number;
  /** Give up when the session is not ready this long after the first poll (ms). */
  readonly timeoutMs: number;
}

export interface PollClock {
  readonly now: () => number;
  /** Resolves after `ms`, rejects as soon as `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** What one poll saw. */
export type PollOutcome<T> =
  | { readonly state: 'ready'; readonly value: T }
  | { readonly state: 'pending'; readonly status: string };

export interface PollResult<T> {
  readonly value: T;
  readonly polls: number;
}

/** Thrown by `sleep` when the run stops; carries no secret. */
function interrupted(polls: number): BreError {
  return new BreError('INTERRUPTED', 'Stopped waiting for the BSA session to become ready: the run is stopping', {
    service: 'account',
    details: { calls: polls },
  });
}

const realClock: PollClock = { now: () => Date.now(), sleep };

/**
 * Calls `poll` until it reports ready. The last wait is cut to the deadline, so there is always one poll
 * at (about) the time limit before NOT_READY. Errors from `poll` (ACCOUNT_ERROR for a failed session, HTTP
 * errors) propagate unchanged.
 */
export async function pollUntilReady<T>(
  poll: () => Promise<PollOutcome<T>>,
  options: PollOptions,
  signal: AbortSignal,
  clock: PollClock = realClock,
): Promise<PollResult<T>> {
  const deadline = clock.now() + options.timeoutMs;
  let interval = Math.max(1, options.intervalMs);
  // Every wait but the last lasts at least intervalMs, so more polls than this mean the clock is not
  // moving (a frozen test clock): stop instead of polling forever.
  const maxPolls = Math.floor(options.timeoutMs / interval) + 2;
  let polls = 0;
  for (;;) {
    if (signal.aborted) throw interrupted(polls);
    polls += 1;
    const outcome = await poll();
    if (outcome.state === 'ready') return { value: outcome.value, polls };
    const left = deadline - clock.now();
    if (left <= 0 || polls >= maxPolls) {
      throw new BreError(
        'NOT_READY',
        `BSA session not ready for fetch_data after ${polls} status checks over ${Math.round(options.timeoutMs / 1000)} s ` +
          `(last status ${JSON.stringify(outcome.status)}); a later run with --retry-errors will pick it up`,
        { service: 'account', details: { calls: polls } },
      );
    }
    try {
      await clock.sleep(Math.min(interval, left), signal);
    } catch {
      throw interrupted(polls);
    }
    interval = Math.min(interval * 2, Math.max(options.maxIntervalMs, options.intervalMs));
  }
}
