/**
 * Latency percentiles in constant memory: log-spaced buckets (about 4% wide) from 0.1 ms to ~10 min, so a
 * run of any length reports p50/p95/p99 without keeping every sample.
 */
const MIN_MS = 0.1;
const GROWTH = 1.04;
const BUCKETS = Math.ceil(Math.log(600_000 / MIN_MS) / Math.log(GROWTH)) + 1;
const LOG_GROWTH = Math.log(GROWTH);

export class Histogram {
  readonly #counts = new Uint32Array(BUCKETS);
  #n = 0;
  #max = 0;

  record(ms: number): void {
    const i = ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / LOG_GROWTH));
    this.#counts[i] += 1;
    this.#n += 1;
    if (ms > this.#max) this.#max = ms;
  }

  get count(): number {
    return this.#n;
  }

  /** Upper bound of the bucket holding quantile q (0..1), in ms; null when empty. */
  quantile(q: number): number | null {
    if (this.#n === 0) return null;
    const target = Math.max(1, Math.ceil(q * this.#n));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i += 1) {
      seen += this.#counts[i];
      if (seen >= target) return Math.round(Math.min(this.#max, MIN_MS * GROWTH ** i) * 10) / 10;
    }
    return Math.round(this.#max * 10) / 10;
  }
}
