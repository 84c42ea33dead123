/**
 * The sandbox's rate limiter: a strict SLIDING window per caller IP per service (decision spec section 8:
 * "N requests per minute per IP"). A request is admitted when fewer than `limit` admitted requests arrived
 * within the last `windowMs` (an arrival at t is inside the window at `now` while now - t < windowMs).
 * Refused requests do not count toward the window: a client hammering through 429s is not locked out
 * longer than the window itself. Timestamps live in a ring buffer, so a check is O(1) amortised.
 */
export type { Rate } from '@bre-batch/core/rates';

export class SlidingWindow {
  #buf: Float64Array;
  #head = 0;
  #size = 0;
  /** The last ceil(limit) admitted arrivals, kept past the window: for `tightestSpanMs`. */
  readonly #last: Float64Array | null;
  #lastHead = 0;
  #lastSize = 0;
  /**
   * Fewest ms between an admitted arrival and the one ceil(limit) admitted arrivals before it: at least the
   * window (else it was refused); how much more is the margin a client left (Infinity until there are that many).
   */
  tightestSpanMs = Infinity;

  /** `limit` null = unlimited (the window still counts, for statistics). */
  constructor(
    readonly limit: number | null,
    readonly windowMs: number,
  ) {
    this.#buf = new Float64Array(limit ?? 64);
    this.#last = limit === null ? null : new Float64Array(Math.ceil(limit));
  }

  /** Admitted requests currently inside the window (as of the last `hit`). */
  get count(): number {
    return this.#size;
  }

  /** Admits (returns 0) or refuses (returns ms until the oldest admitted request leaves the window). */
  hit(now: number): number {
    const cap = this.#buf.length;
    while (this.#size > 0 && now - this.#buf[this.#head] >= this.windowMs) {
      this.#head = this.#head + 1 === cap ? 0 : this.#head + 1;
      this.#size--;
    }
    if (this.limit !== null && this.#size >= this.limit)
      return Math.max(1, this.#buf[this.#head] + this.windowMs - now);
    if (this.#size === cap) this.#grow();
    const tail = (this.#head + this.#size) % this.#buf.length;
    this.#buf[tail] = now;
    this.#size++;
    if (this.#last) this.#remember(this.#last, now);
    return 0;
  }

  #remember(last: Float64Array, now: number): void {
    if (this.#lastSize < last.length) {
      last[(this.#lastHead + this.#lastSize) % last.length] = now;
      this.#lastSize++;
      return;
    }
    const span = now - last[this.#lastHead];
    if (span < this.tightestSpanMs) this.tightestSpanMs = span;
    last[this.#lastHead] = now;
    this.#lastHead = this.#lastHead + 1 === last.length ? 0 : this.#lastHead + 1;
  }

  #grow(): void {
    const old = this.#buf;
    const next = new Float64Array(old.length * 2);
    for (let i = 0; i < this.#size; i++) next[i] = old[(this.#head + i) % old.length];
    this.#buf = next;
    this.#head = 0;
  }
}

/** Seconds for Retry-After: whole seconds, rounded up, at least 1. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
