/**
 * The account service's limit is not documented (account spec section 8), so its limiter adapts, AIMD
 * style, with time-based steps because the server's window (typically a minute) reacts to the rate of
 * the last whole window, not to the last call:
 * - probing (until the first 429): the rate rises by 10% of the start rate every `stepMs`;
 * - a 429 cuts it to `decrease` x the rate (multiplicative decrease), at most once per `cooldownMs`, so
 *   one burst of 429s from a window still full of the old rate counts once;
 * - after that, it rises gently again (2% a step), probing for room while staying near the limit.
 * The rate stays within [floor, ceiling].
 */
import { PacedLimiter, type PacedLimiterOptions } from './paced.js';
import type { Rate } from '@bre-batch/core/rates';

export interface AdaptiveOptions {
  /** Multiplier on a 429 (default 0.8). */
  readonly decrease?: number;
  /** Time between increases, ms (default 5000). */
  readonly stepMs?: number;
  /** Increase per step while probing, per minute (default 10% of the start rate). */
  readonly probeStepPerMinute?: number;
  /** Increase per step after the first 429, as a share of the current rate (default 0.02). */
  readonly steadyStepShare?: number;
  /** Highest rate probed, per minute (default 10x the start). */
  readonly ceilingPerMinute?: number;
  readonly floorPerMinute?: number;
  /** No second decrease within this many ms (default 10 s). */
  readonly cooldownMs?: number;
  readonly now?: () => number;
}

export class AdaptiveLimiter extends PacedLimiter {
  readonly #opts: Required<AdaptiveOptions>;
  #probing = true;
  #lastStep: number;
  #lastDecrease = -Infinity;
  #throttled = 0;

  constructor(base: PacedLimiterOptions & { rate: Rate }, opts: AdaptiveOptions = {}) {
    super({ ...base, widenOn429: false });
    const start = this.perMinute as number;
    this.#opts = {
      decrease: opts.decrease ?? 0.8,
      stepMs: opts.stepMs ?? 5000,
      probeStepPerMinute: opts.probeStepPerMinute ?? Math.max(1, start * 0.1),
      steadyStepShare: opts.steadyStepShare ?? 0.02,
      ceilingPerMinute: opts.ceilingPerMinute ?? start * 10,
      floorPerMinute: opts.floorPerMinute ?? Math.max(1, start * 0.05),
      cooldownMs: opts.cooldownMs ?? 10_000,
      now: opts.now ?? Date.now,
    };
    this.#lastStep = this.#opts.now();
  }

  get probing(): boolean {
    return this.#probing;
  }

  override onThrottled(retryAfterSeconds?: number): void {
    super.onThrottled(retryAfterSeconds);
    this.#throttled += 1;
    const now = this.#opts.now();
    this.#lastStep = now;
    if (now - this.#lastDecrease < this.#opts.cooldownMs) return;
    this.#lastDecrease = now;
    this.#probing = false;
    this.#set(Math.max(this.#opts.floorPerMinute, (this.perMinute as number) * this.#opts.decrease));
  }

  override onSuccess(): void {
    super.onSuccess();
    const now = this.#opts.now();
    if (now - this.#lastStep < this.#opts.stepMs) return;
    this.#lastStep = now;
    const current = this.perMinute as number;
    const step = this.#probing ? this.#opts.probeStepPerMinute : Math.max(1, current * this.#opts.steadyStepShare);
    this.#set(Math.min(this.#opts.ceilingPerMinute, current + step));
  }

  #set(perMinute: number): void {
    this.setRate({ limit: perMinute, windowMs: 60_000 });
    this.perMinute = Math.round(perMinute * 10) / 10;
  }
}
