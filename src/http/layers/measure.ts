/**
 * Measure: every attempt's start, duration and outcome (an HTTP status, or the error code in lower case) into
 * the service's stats, the run's (`also`, when each source address has a client of its own) and the stage's.
 * It sits just above the deadline, so a cut attempt counts as `timeout` and its time is the time-out's. An
 * attempt abandoned by the stopping run (INTERRUPTED) is not counted: it says nothing of the service.
 *
 * When calls have a price, the same frame counts the spend (`measure(meter, spend)`): each priced attempt is
 * pending from its dispatch to its outcome, then billed or not by the billing rule (../../limits/spend.ts) from
 * what measure sees: the answer's status, or `timeout` for an attempt its deadline cut; one abandoned by the
 * stopping run (INTERRUPTED) left and may have been run, so it counts as a time-out. It was a layer of its own
 * above measure, whose async frame each attempt in flight held through every scavenge: with 64 calls in flight,
 * about 100 bytes a row more of the young generation survived (4%; docs/history.md, 2026-11-29). An unpriced
 * attempt, or a client without a price, passes as before.
 */
import { toBreError } from '@bre-batch/core/errors';
import { CallStats } from '../../metrics/service-stats.js';
import type { ServiceName } from '@bre-batch/core/types';
import type { HttpResponse } from '../transport.js';
import type { SpendMeter } from '../../limits/spend.js';
import type { Attempt, Layer } from './types.js';

/** The client's counters, written by the measure and retry layers, read by the run (summary, progress, metrics). */
export class Meter {
  readonly stats: Readonly<Record<ServiceName, CallStats>> = {
    workflow: new CallStats(),
    bureau: new CallStats(),
    account: new CallStats(),
  };
  /** Milliseconds spent sleeping before retries (backoff or Retry-After), summed over calls, per service. */
  readonly retryWaitMs: Record<ServiceName, number> = { workflow: 0, bureau: 0, account: 0 };
  readonly #also: Readonly<Record<ServiceName, CallStats>> | undefined;

  constructor(also?: Readonly<Record<ServiceName, CallStats>>) {
    this.#also = also;
  }

  attempt(a: Attempt, startedAt: number, ms: number, status: number | string): void {
    this.stats[a.service].recordAttempt(startedAt, ms, status);
    this.#also?.[a.service].recordAttempt(startedAt, ms, status);
    a.stageStats?.recordAttempt(startedAt, ms, status);
  }

  retry(a: Attempt): void {
    this.stats[a.service].retries += 1;
    if (this.#also) this.#also[a.service].retries += 1;
    if (a.stageStats) a.stageStats.retries += 1;
  }

  waited(service: ServiceName, ms: number): void {
    this.retryWaitMs[service] += ms;
  }
}

export function measure(meter: Meter, spend?: SpendMeter): Layer<HttpResponse> {
  return (next) => async (a) => {
    // Priced only with a spend meter and a price (the header says why in this frame).
    const price = spend ? (a.price ?? 0) : 0;
    if (price !== 0) spend!.start(a.service, price);
    const started = Date.now();
    const t0 = performance.now();
    try {
      const res = await next(a);
      meter.attempt(a, started, performance.now() - t0, res.status);
      if (price !== 0) spend!.end(a.service, price, res.status);
      return res;
    } catch (err) {
      const e = toBreError(err, 'NETWORK');
      if (e.code !== 'INTERRUPTED') meter.attempt(a, started, performance.now() - t0, e.code.toLowerCase());
      if (price !== 0) spend!.end(a.service, price, e.status ?? e.code.toLowerCase());
      throw e;
    }
  };
}
