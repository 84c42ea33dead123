/** Counters per service and per stage, reported in summary.json and the progress bar. */
import { Histogram } from './histogram.js';

/** What summary.json holds for a service or a stage (packages/formats/src/summary.ts: callStatsShape). */
export interface CallStatsJson {
  readonly attempts: number;
  readonly retries: number;
  readonly throttled_429: number;
  readonly statuses: Record<string, number>;
  readonly latency_ms: { readonly p50: number | null; readonly p95: number | null; readonly p99: number | null };
  readonly network_ms: number;
  readonly achieved_per_minute: number | null;
}

export class CallStats {
  attempts = 0;
  retries = 0;
  throttled = 0;
  readonly statuses: Record<string, number> = {};
  networkMs = 0;
  readonly latency = new Histogram();
  firstStart = 0;
  lastStart = 0;
  /** Latencies since the last takeRecent(): the run's time series shows percentiles per interval. */
  #recent = new Histogram();

  recordAttempt(startedAt: number, ms: number, status: number | string): void {
    this.attempts += 1;
    if (this.firstStart === 0) this.firstStart = startedAt;
    this.lastStart = startedAt;
    this.networkMs += ms;
    this.latency.record(ms);
    this.#recent.record(ms);
    const k = String(status);
    this.statuses[k] = (this.statuses[k] ?? 0) + 1;
    if (status === 429) this.throttled += 1;
  }

  takeRecent(): Histogram {
    const h = this.#recent;
    this.#recent = new Histogram();
    return h;
  }

  /** Attempts per minute between the first and last start (the rate the server saw). */
  achievedPerMinute(): number | null {
    if (this.attempts < 2 || this.lastStart <= this.firstStart) return null;
    return Math.round((((this.attempts - 1) * 60_000) / (this.lastStart - this.firstStart)) * 10) / 10;
  }

  toJSON(): CallStatsJson {
    return {
      attempts: this.attempts,
      retries: this.retries,
      throttled_429: this.throttled,
      statuses: this.statuses,
      latency_ms: {
        p50: this.latency.quantile(0.5),
        p95: this.latency.quantile(0.95),
        p99: this.latency.quantile(0.99),
      },
      network_ms: Math.round(this.networkMs),
      achieved_per_minute: this.achievedPerMinute(),
    };
  }
}
