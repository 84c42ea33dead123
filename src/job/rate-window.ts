/**
 * A worker's rate as its heartbeat reports it: rows a second over the last minute, counted from the first row
 * it handed its run, not from its start. Measured from the start, the time a worker spends starting (its
 * sandbox, its first claim) counted as slowness, and an early `job status` gave an ETA up to twice the truth.
 */

/** The span the rate is measured over once the worker has been at work that long. */
const SPAN_MS = 60_000;

export class RateWindow {
  /** (time, rows done) at the first row and at each heartbeat since, the oldest still needed first. */
  readonly #samples: { at: number; done: number }[] = [];

  /** The first row handed to the run: rows are counted from here. */
  start(at: number, done = 0): void {
    if (this.#samples.length === 0) this.#samples.push({ at, done });
  }

  /** Rows a second at `at`, `done` rows in all: 0 before the first row. */
  rate(at: number, done: number): number {
    if (this.#samples.length === 0) return 0;
    this.#samples.push({ at, done });
    // The window starts at the newest sample a span ago or older (at the first row while younger than a span).
    while (this.#samples.length > 2 && this.#samples[1].at <= at - SPAN_MS) this.#samples.shift();
    const first = this.#samples[0];
    const seconds = (at - first.at) / 1000;
    return seconds > 0 ? (done - first.done) / seconds : 0;
  }
}
