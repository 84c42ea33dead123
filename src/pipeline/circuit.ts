/**
 * Stops a run that is only producing failures (a service down for the night) instead of grinding a million
 * rows into errors.ndjson: N consecutive service failures, or a failure share above a threshold over the last
 * `window` finished calls. Which codes count is the error table's (packages/core/src/errors.ts): data errors (422,
 * workflow 500 {detail}, account detail.error) are the row's fault, not the service's, and do not count. Throttling is
 * counted apart (`throttled`): a service answering 429 is full, not failing; its rows wait, and a spell longer
 * than --throttle-deadline stops the run on its own (THROTTLED, src/http/), not as a run of failures.
 */
import { isServiceFailure, type ErrorCode } from '@bre-batch/core/errors';

export interface CircuitOptions {
  /** Consecutive service failures that open the circuit (default 25; 0 disables). */
  readonly consecutive: number;
  /** Share of failures over the last `window` outcomes that opens it (default 0.8 over 200). */
  readonly share: number;
  readonly window: number;
}

export const DEFAULT_CIRCUIT: CircuitOptions = { consecutive: 25, share: 0.8, window: 200 };

export class Circuit {
  readonly #opts: CircuitOptions;
  #streak = 0;
  readonly #ring: Uint8Array;
  #pos = 0;
  #filled = 0;
  #failures = 0;
  /** Outcomes that were throttling (RATE_LIMITED): neither a failure nor a success. */
  throttled = 0;

  constructor(opts: CircuitOptions = DEFAULT_CIRCUIT) {
    this.#opts = opts;
    this.#ring = new Uint8Array(Math.max(1, opts.window));
  }

  /** Records an outcome; returns a reason when the circuit opens. */
  record(code: ErrorCode | null): string | undefined {
    if (code === 'RATE_LIMITED') {
      this.throttled += 1;
      return undefined;
    }
    const failed = code !== null && isServiceFailure(code);
    if (code !== null && !failed) return undefined;
    this.#streak = failed ? this.#streak + 1 : 0;
    if (this.#filled === this.#ring.length) this.#failures -= this.#ring[this.#pos];
    else this.#filled += 1;
    this.#ring[this.#pos] = failed ? 1 : 0;
    this.#failures += failed ? 1 : 0;
    this.#pos = (this.#pos + 1) % this.#ring.length;
    if (this.#opts.consecutive > 0 && this.#streak >= this.#opts.consecutive) {
      return `${this.#streak} consecutive calls failed after all retries (last: ${code})`;
    }
    if (
      this.#opts.share < 1 &&
      this.#filled === this.#ring.length &&
      this.#failures / this.#filled > this.#opts.share
    ) {
      return `${this.#failures} of the last ${this.#filled} calls failed after all retries`;
    }
    return undefined;
  }
}
