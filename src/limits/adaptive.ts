/**
 * The account service's limit is not documented (account spec section 8), so its limiter adapts, AIMD
 * style: each 429 cuts the allowed rate (multiplicative decrease, at most once per cool-down so one burst of
 * 429s counts once), and a run of successes raises it by a small step (additive increase), probing back up
 * towards the real limit. The rate never exceeds `ceiling` nor goes below `floor`.
 */
import { BottleneckLimiter, minTimeFor, type LocalLimiterOptions } from './limiter.js';
import type { Rate } from './rates.js';

export interface AdaptiveOptions {
  /** Multiplier on a 429 (default 0.75). */
  readonly decrease?: number;
  /** Per-minute increase after `successesPerStep` successes (default 5% of the start rate, at least 1). */
  readonly increasePerMinute?: number;
  readonly successesPerStep?: number;
  /** Highest rate probed, per minute (default 10x the start). */
  readonly ceilingPerMinute?: number;
  readonly floorPerMinute?: number;
  /** No second decrease within this many ms (default 2 s). */
  readonly cooldownMs?: number;
}

export class AdaptiveLimiter extends BottleneckLimiter {
  readonly #opts: Required<AdaptiveOptions>;
  #successes = 0;
  #lastDecrease = 0;
  readonly #margin: number | undefined;

  constructor(base: LocalLimiterOptions & { rate: Rate }, opts: AdaptiveOptions = {}) {
    super(base);
    const start = this.perMinute as number;
    this.#margin = base.margin;
    this.#opts = {
      decrease: opts.decrease ?? 0.75,
      increasePerMinute: opts.increasePerMinute ?? Math.max(1, start * 0.05),
      successesPerStep: opts.successesPerStep ?? 10,
      ceilingPerMinute: opts.ceilingPerMinute ?? start * 10,
      floorPerMinute: opts.floorPerMinute ?? Math.max(1, start * 0.05),
      cooldownMs: opts.cooldownMs ?? 2000,
    };
  }

  override onThrottled(): void {
    const now = Date.now();
    this.#successes = 0;
    if (now - this.#lastDecrease < this.#opts.cooldownMs) return;
    this.#lastDecrease = now;
    this.#set(Math.max(this.#opts.floorPerMinute, (this.perMinute as number) * this.#opts.decrease));
  }

  override onSuccess(): void {
    this.#successes += 1;
    if (this.#successes < this.#opts.successesPerStep) return;
    this.#successes = 0;
    this.#set(Math.min(this.#opts.ceilingPerMinute, (this.perMinute as number) + this.#opts.increasePerMinute));
  }

  #set(perMinute: number): void {
    this.perMinute = perMinute;
    this.limiter.updateSettings({ minTime: minTimeFor({ limit: perMinute, windowMs: 60_000 }, this.#margin) });
  }
}
