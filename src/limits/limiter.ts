/**
 * One limiter per service. Every attempt of every call, retries included, is scheduled here, so the
 * per-IP limit holds whatever the retry traffic (Bottleneck's own `failed`-event retries would bypass the
 * spacing: they are not used). Starts are spaced by `minTime` = window / limit, widened by a safety margin, so
 * that a strict sliding-window limiter on the server never sees more than `limit` arrivals in any window even
 * with some network jitter.
 */
import Bottleneck from 'bottleneck';
import pLimit, { type LimitFunction } from 'p-limit';
import type { ServiceName } from '../types.js';
import type { Rate } from './rates.js';

export interface LimiterStats {
  /** Total ms attempts spent queued in the limiter (waiting for the rate or a concurrency slot). */
  readonly waitMs: number;
  readonly scheduled: number;
  /** Current requests/minute the limiter allows (changes for adaptive limiters); null when unlimited. */
  readonly currentPerMinute: number | null;
}

export interface ServiceLimiter {
  readonly service: ServiceName;
  /**
   * Runs `fn` when the limit allows. `retry` attempts go ahead of first attempts still queued, so a row
   * that already waited out its backoff is not sent to the back of a long queue (and a failing service is
   * noticed by the circuit breaker sooner).
   */
  schedule<T>(fn: () => Promise<T>, retry?: boolean): Promise<T>;
  /**
   * A 429 was answered. The server's window is full: every attempt of this service holds back until
   * `pausedUntil` (Retry-After, else 1 s), not only the refused one; adaptive limiters also slow down.
   */
  onThrottled(retryAfterSeconds?: number): void;
  /** Epoch ms before which no attempt should start (0 when not paused). */
  readonly pausedUntil: number;
  onSuccess(): void;
  stats(): LimiterStats;
  stop(): Promise<void>;
}

/** End of the pause a 429 asks for: its Retry-After (at most a minute), else one second. */
function pauseEnd(retryAfterSeconds: number | undefined): number {
  const seconds = retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0 ? Math.min(retryAfterSeconds, 60) : 1;
  return Date.now() + seconds * 1000;
}

/** Safety margin on the spacing: 1.5% below the limit (see the benchmark for the achieved figure). */
export const DEFAULT_MARGIN = 0.015;
/**
 * The margin must also absorb arrival jitter (an event-loop stall on either side bunches requests): the
 * slack in one window is margin x window, so short windows get a wider margin, at least 100 ms of slack (50 ms
 * drew 429s on a loaded machine: README, Throttling and retries); a 60 s window's 1.5% is 900 ms already.
 */
const JITTER_SLACK_MS = 100;

export function minTimeFor(rate: Rate, margin = DEFAULT_MARGIN): number {
  return (rate.windowMs / rate.limit) * (1 + Math.max(margin, JITTER_SLACK_MS / rate.windowMs));
}

/**
 * Concurrency that keeps a limited service busy (Little's law: in flight = rate x latency). Sized for
 * responses of up to ~10 s at the full rate; without a limit, a fixed pool that saturates a local target.
 */
export function defaultConcurrency(rate: Rate | null): number {
  if (!rate) return 64;
  const perSecond = (rate.limit * 1000) / rate.windowMs;
  return Math.max(8, Math.min(256, Math.ceil(perSecond * 10)));
}

export interface LocalLimiterOptions {
  readonly service: ServiceName;
  readonly rate: Rate | null;
  readonly concurrency: number;
  readonly margin?: number;
  /** Supplied when the limiter is shared through Redis (src/limits/redis.ts). */
  readonly bottleneck?: Bottleneck;
}

/** What every limiter shares: the wait accounting, the pause after a 429, the counters. */
abstract class LimiterBase implements ServiceLimiter {
  readonly service: ServiceName;
  pausedUntil = 0;
  protected perMinute: number | null = null;
  #waitMs = 0;
  #scheduled = 0;

  constructor(service: ServiceName) {
    this.service = service;
  }

  /** Queues `run` in the underlying limiter. */
  protected abstract enqueue<T>(run: () => Promise<T>, retry: boolean): Promise<T>;
  abstract stop(): Promise<void>;

  schedule<T>(fn: () => Promise<T>, retry = false): Promise<T> {
    const queuedAt = performance.now();
    this.#scheduled += 1;
    return this.enqueue(() => {
      this.#waitMs += performance.now() - queuedAt;
      return fn();
    }, retry);
  }

  onThrottled(retryAfterSeconds?: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, pauseEnd(retryAfterSeconds));
  }

  onSuccess(): void {}

  stats(): LimiterStats {
    return { waitMs: Math.round(this.#waitMs), scheduled: this.#scheduled, currentPerMinute: this.perMinute };
  }
}

export class BottleneckLimiter extends LimiterBase {
  protected readonly limiter: Bottleneck;

  constructor(opts: LocalLimiterOptions) {
    super(opts.service);
    this.perMinute = opts.rate ? (opts.rate.limit * 60_000) / opts.rate.windowMs : null;
    this.limiter = opts.bottleneck ?? new Bottleneck({
      maxConcurrent: opts.concurrency,
      minTime: opts.rate ? minTimeFor(opts.rate, opts.margin) : 0,
    });
    // Bottleneck emits 'error' for failures inside its own machinery (e.g. a Redis hiccup); without a
    // listener it would be thrown asynchronously and crash the process.
    this.limiter.on('error', () => undefined);
  }

  protected enqueue<T>(run: () => Promise<T>, retry: boolean): Promise<T> {
    // Bottleneck: a lower priority number runs first; 5 is its default.
    return this.limiter.schedule({ priority: retry ? 4 : 5 }, run);
  }

  async stop(): Promise<void> {
    await this.limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
    // disconnect() returns nothing for a local limiter and a promise for a clustered one.
    await Promise.resolve(this.limiter.disconnect?.()).catch(() => undefined);
  }
}

/**
 * Without a rate there is nothing to space, only a cap on calls in flight: p-limit does that with no timer
 * per job. (Bottleneck starts each job from a timer tick even with minTime 0, which caps it near a few
 * hundred jobs a second: SGrondin/bottleneck#144.)
 */
export class ConcurrencyLimiter extends LimiterBase {
  readonly #limit: LimitFunction;

  constructor(service: ServiceName, concurrency: number) {
    super(service);
    this.#limit = pLimit(concurrency);
  }

  protected enqueue<T>(run: () => Promise<T>): Promise<T> {
    return this.#limit(run);
  }

  async stop(): Promise<void> {
    this.#limit.clearQueue();
  }
}
