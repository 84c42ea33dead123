/**
 * Rate limit: one attempt = one slot of its service's limiter, which spaces attempt starts and caps attempts
 * in flight. It sits below retry, so every attempt, retries included, goes through the limiter again, and
 * above classification, so the limiter hears of a 429 (`onThrottled`) and of a success (`onSuccess`).
 *
 * An attempt still queued when the run stops is abandoned at once: the limiter would otherwise release the
 * queue one spacing interval at a time (a full window of rows at 500/min is ~15 s), far past the stop's grace.
 * A started attempt is left to finish (or to the hard signal). One listener on the stop signal serves every
 * queued attempt (a listener per attempt cost a measurable share of a fast run).
 */
import { BreError, toBreError } from '@bre-batch/core/errors';
import type { ServiceLimiter } from '../../limits/limiter.js';
import type { ServiceName } from '@bre-batch/core/types';
import type { Attempt, Dispatch, Layer } from './types.js';

export interface LimitOptions {
  readonly limiterOf: (service: ServiceName) => ServiceLimiter;
  /** Aborted when the run stops taking work: queued attempts and pause waits give up at once. */
  readonly signal: AbortSignal;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * How long a service may answer nothing but 429s before its calls stop the run (THROTTLED: fatal, exit 3,
   * no row written to errors). Default DEFAULT_THROTTLE_DEADLINE_MS.
   */
  readonly throttleDeadlineMs?: number;
  /** A retry's wait for the service's pause to end (a 429's back-off is that pause): counted with the retries' sleeps. */
  readonly waited?: (service: ServiceName, ms: number) => void;
}

/** --throttle-deadline's default: a gateway's throttling spell of a few minutes is waited out, a night's is not. */
const DEFAULT_THROTTLE_DEADLINE_MS = 10 * 60_000;

/** The stop of a run whose service has refused every call for the deadline. */
function throttledStop(service: ServiceName, sinceMs: number, deadlineMs: number): BreError {
  return new BreError(
    'THROTTLED',
    `the ${service} service kept throttling: it answered every call 429 Too Many Requests for ${minutes(sinceMs)} (--throttle-deadline ${minutes(deadlineMs)}). No row was written to errors for it: re-run the same command once the service takes calls again (it resumes), or give a longer --throttle-deadline; if it goes on, ask the provider whether this machine's address shares its limit with other clients`,
    { service, status: 429 },
  );
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

/** What a limiter slot returns when the attempt was not sent because the service is paused after a 429. */
const PAUSED = Symbol('paused');

const abandoned = (service: ServiceName) =>
  new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });

export function limit(opts: LimitOptions): Layer<unknown> {
  const { signal, sleep } = opts;
  const deadlineMs = opts.throttleDeadlineMs ?? DEFAULT_THROTTLE_DEADLINE_MS;
  /** THROTTLED once the service has refused everything for the deadline. */
  const pastDeadline = (limiter: ServiceLimiter, service: ServiceName): void => {
    const since = limiter.throttledSince;
    if (since !== null && Date.now() - since >= deadlineMs)
      throw throttledStop(service, Date.now() - since, deadlineMs);
  };
  const queued = new Set<() => void>();
  signal.addEventListener(
    'abort',
    () => {
      for (const abandon of queued) abandon();
      queued.clear();
    },
    { once: true },
  );

  /**
   * One attempt in one slot of the limiter. An attempt the limiter starts at once (inside `schedule`, as a
   * free in-process limiter does) has nothing left to abandon and costs no promise of its own; only one that
   * waits in the queue gets a promise the stop can reject.
   */
  function slot(limiter: ServiceLimiter, next: Dispatch<unknown>, a: Attempt): Promise<unknown> {
    let state = 'queued' as 'queued' | 'started' | 'abandoned';
    const scheduled = limiter.schedule(async (sent) => {
      // Started: from here the attempt is left to finish. Abandoned while queued: not sent.
      if (state === 'abandoned' || signal.aborted) throw abandoned(a.service);
      state = 'started';
      // Released by the limiter during a pause that began after it queued: give the slot up unsent.
      if (limiter.pausedUntil > Date.now()) return PAUSED;
      return next({ ...a, sent });
    }, a.number > 1);
    if (state === 'started') return scheduled;
    return new Promise<unknown>((resolve, reject) => {
      const abandon = () => {
        if (state !== 'queued') return;
        state = 'abandoned';
        reject(abandoned(a.service));
      };
      queued.add(abandon);
      scheduled.then(
        (value) => {
          queued.delete(abandon);
          resolve(value);
        },
        (err: unknown) => {
          queued.delete(abandon);
          reject(err);
        },
      );
    });
  }

  return (next) => async (a) => {
    const limiter = opts.limiterOf(a.service);
    for (;;) {
      if (signal.aborted) throw abandoned(a.service);
      pastDeadline(limiter, a.service);
      // After a 429 the whole service holds back until the pause ends (outside the limiter, holding no
      // slot); the limiter's spacing then spreads the waiting attempts out again.
      const wait = limiter.pausedUntil - Date.now();
      if (wait > 0) {
        const slept = performance.now();
        try {
          await sleep(wait, signal);
        } catch {
          throw abandoned(a.service);
        } finally {
          if (a.number > 1) opts.waited?.(a.service, performance.now() - slept);
        }
        continue;
      }
      let result: unknown;
      try {
        result = await slot(limiter, next, a);
      } catch (err) {
        const e = toBreError(err, 'NETWORK');
        if (e.code === 'RATE_LIMITED') {
          limiter.onThrottled(e.retryAfterSeconds);
          pastDeadline(limiter, a.service);
        } else if (e.status !== null) limiter.onAnswered();
        throw e;
      }
      if (result === PAUSED) continue;
      limiter.onSuccess();
      return result;
    }
  };
}
