/**
 * One limiter per service. Every attempt of every call, retries included, is scheduled through it, so the
 * per-IP limit holds whatever the retry traffic. In-process: ./paced.ts; shared between processes through
 * Redis: ./redis.ts; which one a run gets: ./factory.ts.
 */
import { isBreError } from '../errors.js';
import type { ServiceName } from '../types.js';
import type { Rate } from './rates.js';

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
   * `pausedUntil` (Retry-After, else 1 s), not only the refused one; adaptive limiters also slow down.
   */
  onThrottled(retryAfterSeconds?: number): void;
  /** Epoch ms before which no attempt should start (0 when not paused). */
  readonly pausedUntil: number;
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

/** The pause a 429 asks for, ms: its Retry-After (at most a minute), else one second. */
export function pauseMs(retryAfterSeconds: number | undefined): number {
  const seconds = retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0 ? Math.min(retryAfterSeconds, 60) : 1;
  return seconds * 1000;
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

/**
 * An attempt this side cut before its answer came (its whole-attempt time-out, TIMEOUT; the run abandoning
 * it, INTERRUPTED): no answer tells when the server counted it, if it did (./pacer.ts `cut`).
 */
export function wasCut(err: unknown): boolean {
  return isBreError(err) && (err.code === 'TIMEOUT' || err.code === 'INTERRUPTED');
}
