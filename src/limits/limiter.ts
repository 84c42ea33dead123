/**
 * One limiter per service. Every attempt of every call, retries included, is scheduled through it, so the
 * per-IP limit holds whatever the retry traffic. In-process: ./paced.ts; shared between processes through
 * Redis: ./redis.ts; which one a run gets: ./factory.ts.
 */
import { isBreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import type { Rate } from '@bre-batch/core/rates';

export interface LimiterStats {
  /** Total ms attempts spent queued in the limiter (waiting for the rate or a concurrency slot). */
  readonly waitMs: number;
  readonly scheduled: number;
  /** Current requests/minute the limiter allows (changes for adaptive limiters); null when unlimited. */
  readonly currentPerMinute: number | null;
  /**
   * In-process limiters with a rate, at the end (both widened by 429s): how late an unanswered call was taken
   * to reach the server (--rate-slack), and the margin kept beyond each window, ms.
   */
  readonly slackMs?: number;
  readonly marginMs?: number;
  /** In-process limiters: the calls in flight against the cap that follows the latency, at the end. */
  readonly inFlight?: InFlightView;
}

/** Calls in flight, the cap the latency sets (./in-flight.ts), and whether its bound (--concurrency) holds. */
export interface InFlightView {
  readonly running: number;
  readonly cap: number;
  /** --concurrency. */
  readonly bound: number;
  /** The latency the cap is sized for, ms; and the mean of the answers so far (0 before the first). */
  readonly latencyMs: number;
  readonly meanLatencyMs: number;
  /** The calls in flight the latency asks for now, before the bound. */
  readonly wanted: number;
  /** The bound held a start back within the last second: it, not the limit, holds the rate. */
  readonly boundHolding: boolean;
  /** Ms the bound held starts back, in all. */
  readonly boundHeldMs: number;
  /** Calls in flight the latency asked for when the bound last held (0: never). */
  readonly wantedAtHold: number;
}

export interface ServiceLimiter {
  readonly service: ServiceName;
  /**
   * Runs `fn` when the limit allows. `retry` attempts go ahead of first attempts still queued, so a row
   * that already waited out its backoff is not sent to the back of a long queue (and a failing service is
   * noticed by the circuit breaker sooner). `fn` calls `sent` when its request is written to a connection:
   * an in-process limiter bounds when the server counted the call by that time until the answer comes
   * (./pacer.ts).
   */
  schedule<T>(fn: (sent: () => void) => Promise<T>, retry?: boolean): Promise<T>;
  /**
   * A 429 was answered. The server's window is full: every attempt of this service holds back until
   * `pausedUntil`, not only the refused one, for the documented back-off of this spell of 429s or a longer
   * Retry-After (./throttle.ts); adaptive limiters also slow down.
   */
  onThrottled(retryAfterSeconds?: number): void;
  /** Epoch ms before which no attempt should start (0 when not paused). */
  readonly pausedUntil: number;
  /** Epoch ms since which every answer has been a 429 (null when the service is not throttling). */
  readonly throttledSince: number | null;
  /** An answer that was not a 429 (a row's own error included): the service takes calls again. */
  onAnswered(): void;
  /** Calls in flight against the cap that follows the latency (in-process limiters). */
  inFlight?(): InFlightView;
  /** The cap on calls in flight now (cheap: asked as rows enter the run's window). */
  inFlightCap?(): number;
  onSuccess(): void;
  /**
   * About how many ms until an attempt scheduled now would start: 0 when one could start now, else an
   * estimate that counts the attempts queued ahead of it. Cheap (no I/O): asked per row by a caller choosing
   * between limiters (one per source address).
   */
  nextStartInMs(): number;
  stats(): LimiterStats;
  /** Attempts still queued are dropped (their promises reject); attempts in flight are left to finish. */
  stop(): Promise<void>;
}

/**
 * The bound on calls in flight (--concurrency's default). The calls in flight follow the latency measured
 * (./in-flight.ts: Little's law, rate x latency); this is how far they may go: no call lasts longer than its
 * time-out (it is cut there), so rate x time-out, with the same margin, keeps the limit busy whatever the answers
 * take. Without a limit, a fixed pool that saturates a local target.
 */
export function defaultConcurrency(rate: Rate | null, timeoutMs: number): number {
  if (!rate) return 64;
  return Math.max(8, Math.min(MAX_DEFAULT_CONCURRENCY, Math.ceil((rate.limit * timeoutMs * 1.25) / rate.windowMs) + 1));
}

/** The default bound's ceiling: sockets and rows in memory stay within reason at any rate. */
const MAX_DEFAULT_CONCURRENCY = 4096;

/**
 * An attempt this side cut before its answer came (its whole-attempt time-out, TIMEOUT; the run abandoning
 * it, INTERRUPTED): no answer tells when the server counted it, if it did (./pacer.ts `cut`).
 */
export function wasCut(err: unknown): boolean {
  return isBreError(err) && (err.code === 'TIMEOUT' || err.code === 'INTERRUPTED');
}
