/**
 * How many calls of a service may be in flight: enough to keep its limit busy however slowly it answers, and
 * not more. Little's law: calls in flight = rate x latency. A fixed cap sized for answers of 10 s (the default
 * once) held a service answering in 20 s to half its limit; a cap sized for the slowest answer holds
 * hundreds of rows in memory for a service answering in 50 ms. So the cap follows the latency measured, with a
 * margin for its spread, up to a bound (--concurrency) that no latency lifts it past.
 *
 * The latency is not known before the first answers, and a service that slows down tells nothing until its
 * slow answers come back. What is known at once is how long the calls in flight have been waiting: none of them
 * will take less than that. So the estimate is the larger of the mean of recent answers and the age of the
 * oldest call still in flight; while answers are slower than the estimate, the cap grows as that call ages,
 * which keeps starts at the limit's pace from the first one.
 *
 * Pure: times (monotonic ms) are passed in; the limiter owns the timer (./paced.ts).
 */

export interface InFlightOptions {
  /** The limit's starts per ms; null without a rate (the cap is then the bound). */
  readonly perMs: number | null;
  /** The most calls in flight whatever the latency (--concurrency). */
  readonly bound: number;
  /** Multiplier on rate x latency for the spread of answer times (default 1.25). */
  readonly margin?: number;
  /** The fewest calls the cap allows (default 8, or the bound if lower). */
  readonly floor?: number;
}

/** A call in flight, as the cap keeps it. */
export interface Flight {
  readonly at: number;
  done: boolean;
}

/** Weight of the newest answer in the mean latency: about the last 30 answers count. */
const ALPHA = 1 / 16;
/**
 * Two holds by the bound this close together count the time between them as held; with slower answers, two
 * holds within twice the mean latency do (a full cap frees slots only as answers come, so with answers of 1.5 s
 * the holds come in waves 1.5 s apart while the cap stays full throughout).
 */
const HELD_GAP_MS = 1000;

export class InFlight {
  readonly bound: number;
  #perMs: number | null;
  readonly #margin: number;
  readonly #floor: number;
  /** Calls in start order; finished ones are dropped from the head as it moves. */
  #flights: Flight[] = [];
  #head = 0;
  running = 0;
  /** Mean latency of recent answers, ms (0 before the first). */
  #meanMs = 0;
  #answers = 0;
  /** When the bound last held a start back, and the time it held starts back in all. */
  #boundHeldAt = -Infinity;
  #boundHeldMs = 0;
  /** The cap the latency asked for, at the last hold by the bound. */
  #wantedAtHold = 0;

  constructor(opts: InFlightOptions) {
    this.bound = Math.max(1, Math.floor(opts.bound));
    this.#perMs = opts.perMs;
    this.#margin = opts.margin ?? 1.25;
    this.#floor = Math.min(this.bound, Math.max(1, opts.floor ?? 8));
  }

  /** A new rate (the adaptive limiter): the cap follows it. */
  setRate(perMs: number | null): void {
    this.#perMs = perMs;
  }

  started(now: number): Flight {
    const f: Flight = { at: now, done: false };
    this.#flights.push(f);
    this.running += 1;
    return f;
  }

  finished(f: Flight, now: number): void {
    if (f.done) return;
    f.done = true;
    this.running -= 1;
    const ms = now - f.at;
    this.#answers += 1;
    this.#meanMs = this.#answers === 1 ? ms : this.#meanMs + (ms - this.#meanMs) * ALPHA;
    this.#dropDone();
  }

  /** Mean latency of recent answers, ms (0 before the first). */
  get meanLatencyMs(): number {
    return this.#meanMs;
  }

  /** The latency the cap is sized for: the recent mean, or the age of the oldest call in flight if longer. */
  latencyMs(now: number): number {
    const oldest = this.#oldest();
    return oldest === undefined ? this.#meanMs : Math.max(this.#meanMs, now - oldest.at);
  }

  /** The calls in flight the limit needs at the latency measured, before the bound. */
  wanted(now: number): number {
    if (this.#perMs === null) return this.bound;
    return Math.max(this.#floor, Math.ceil(this.#perMs * this.latencyMs(now) * this.#margin) + 1);
  }

  /** The most calls that may be in flight now. */
  cap(now: number): number {
    return Math.min(this.bound, this.wanted(now));
  }

  /**
   * When the cap will have grown past `running` with no call finishing (the oldest call ageing), for the
   * limiter's timer: Infinity when it cannot (no rate, the bound reached, nothing in flight), and while the
   * oldest call is not overdue (younger than twice the mean latency): its answer, which pumps the limiter anyway,
   * is expected first, and a fast service would otherwise arm a timer for every few starts. So a service that
   * slows down all at once costs one latency's dip: the cap catches up at its first slow answer.
   */
  growsAt(now: number): number {
    const oldest = this.#oldest();
    if (this.#perMs === null || oldest === undefined || this.running >= this.bound) return Infinity;
    if (this.#answers > 0 && now - oldest.at < 2 * this.#meanMs) return Infinity;
    // ceil(perMs x age x margin) + 1 > running  <=>  age > (running - 1) / (perMs x margin)
    return oldest.at + (this.running - 1) / (this.#perMs * this.#margin) + 1e-6;
  }

  /**
   * The limiter held a start back because the cap was full. Counted as the bound holding the rate back when
   * the latency asks for more calls than the bound allows.
   */
  held(now: number): void {
    const wanted = this.wanted(now);
    if (wanted <= this.bound || this.running < this.bound) return;
    if (now - this.#boundHeldAt <= this.#heldGapMs()) this.#boundHeldMs += now - this.#boundHeldAt;
    this.#boundHeldAt = now;
    this.#wantedAtHold = wanted;
  }

  /** Whether the bound held a start back within the last second (or twice the mean latency, if longer). */
  boundHolding(now: number): boolean {
    return now - this.#boundHeldAt <= this.#heldGapMs();
  }

  #heldGapMs(): number {
    return Math.max(HELD_GAP_MS, 2 * this.#meanMs);
  }

  /** Ms the bound held starts back, in all. */
  get boundHeldMs(): number {
    return this.#boundHeldMs;
  }

  /** The calls in flight the latency asked for the last time the bound held a start back (0: never). */
  get wantedAtHold(): number {
    return this.#wantedAtHold;
  }

  #oldest(): Flight | undefined {
    this.#dropDone();
    return this.#flights[this.#head];
  }

  #dropDone(): void {
    const fl = this.#flights;
    while (this.#head < fl.length && fl[this.#head].done) {
      fl[this.#head] = undefined as unknown as Flight;
      this.#head += 1;
    }
    if (this.#head >= 1024 && this.#head * 2 >= fl.length) {
      this.#flights = fl.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** The least time the bound must have held starts back for a run to say so (a moment at the start is not worth it). */
const HELD_WORTH_SAYING_MS = 1000;

/**
 * What summary.json and report.html say when --concurrency, rather than the limit, held a service's rate back;
 * undefined when it did not (for long enough to matter).
 */
export function boundNote(
  service: string,
  v: { bound: number; boundHeldMs: number; wantedAtHold: number; latencyMs: number },
): string | undefined {
  if (v.boundHeldMs < HELD_WORTH_SAYING_MS) return undefined;
  const secs = (ms: number) => (ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);
  return (
    `${service}: --concurrency ${v.bound} held the rate below the limit for ${secs(v.boundHeldMs)}: answers took about ${secs(v.latencyMs)}, ` +
    `and the limit needs about ${v.wantedAtHold} calls in flight; raise --concurrency to ${v.wantedAtHold} or more`
  );
}

/** The same, short, for the progress line while it holds. */
export function boundHoldingShort(service: string, v: { bound: number; wantedAtHold: number }): string {
  return `${service} held by --concurrency ${v.bound} (needs ~${v.wantedAtHold})`;
}
