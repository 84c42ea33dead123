/**
 * A service's throttling, as its limiter keeps it: a 429 says the service is full, not that a row is
 * wrong, so the whole service holds back, and for as long as the spec's guidance says (decision spec section 8,
 * account spec section 8: base 1 s, doubled after each attempt, capped at 60 s, +-20% jitter), whatever a
 * Retry-After says below that. Some gateways answer `Retry-After: 0` to every call while they throttle: taken
 * literally, that sends attempts as fast as the limiter allows into a service that refuses them all.
 *
 * The back-off counts pauses, not 429s: the attempts already in flight when a pause begins come back refused
 * too (one full window draws a burst of 429s), and they are the same refusal. A 429 that comes after the pause
 * has ended is a new one, and doubles it. An answer that is not a 429 ends the spell.
 *
 * Pure: times are passed in (monotonic ms for the pause, epoch ms for how long the spell has lasted).
 */
import { backoffDelayMs, DEFAULT_BACKOFF } from './backoff.js';

export interface ThrottleOptions {
  readonly random?: () => number;
}

export class Throttle {
  readonly #random: () => number;
  /** Pauses since the last answer that was not a 429. */
  #streak = 0;
  /** Monotonic ms when the current pause ends. */
  #pauseEnd = -Infinity;
  /** Epoch ms of the first 429 since the last answer that was not one; null while the service answers. */
  #since: number | null = null;
  /** Every 429 counted, and the pauses they caused. */
  refusals = 0;
  pauses = 0;

  constructor(opts: ThrottleOptions = {}) {
    this.#random = opts.random ?? Math.random;
  }

  /**
   * A 429 was answered at `now` (monotonic) / `wall` (epoch). Returns the ms from `now` until the pause ends: the
   * documented back-off for this spell's pause count, or a longer Retry-After (at most the back-off's cap).
   */
  refused(now: number, wall: number, retryAfterSeconds?: number): number {
    this.refusals += 1;
    this.#since ??= wall;
    const asked =
      retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds > 0
        ? Math.min(retryAfterSeconds * 1000, DEFAULT_BACKOFF.capMs)
        : 0;
    if (now < this.#pauseEnd) {
      // An attempt sent before this pause began: the same refusal; only a longer Retry-After moves the end.
      this.#pauseEnd = Math.max(this.#pauseEnd, now + asked);
      return this.#pauseEnd - now;
    }
    this.#streak += 1;
    this.pauses += 1;
    this.#pauseEnd = now + Math.max(backoffDelayMs(this.#streak, undefined, { random: this.#random }), asked);
    return this.#pauseEnd - now;
  }

  /** An answer that was not a 429 (a success or a row's own error): the service takes calls again. */
  answered(): void {
    this.#streak = 0;
    this.#since = null;
  }

  /** Epoch ms since which the service has refused every call answered; null when it is not throttling. */
  get since(): number | null {
    return this.#since;
  }

  /** Pauses in the current spell (0 when not throttling). */
  get streak(): number {
    return this.#streak;
  }
}
