/**
 * When the next attempt may start, for a rate of `limit` calls per `windowMs` that a server enforces as a
 * strict SLIDING window (decision spec section 8; the sandbox's packages/sandbox/src/rate.ts): a call at t is refused
 * while `limit` admitted calls arrived within (t - window, t]. Pure: times are passed in, nothing is timed here
 * (the limiter that owns the timer is ./paced.ts).
 *
 * Two mechanisms: GCRA (virtual scheduling: one wake-up releases every start whose time has come, a late
 * wake-up does not push the schedule back) and a sliding log of the last calls as the server stamped them at
 * the latest (their answer, or `pathMs` after their write), so that two calls `limit` apart reach the server
 * at least a window apart whatever happened on the way. No burst; `margin` covers the two clocks. Why each,
 * and what it costs: docs/decisions/limiter-pacing.md.
 */
import type { Rate } from '@bre-batch/core/rates';

/** How late an unanswered call is taken to reach the server at most, after its write (--rate-slack default). */
export const PATH_SLACK_MS = 250;
/**
 * tau: a stall of the event loop up to this long (a GC pause, a busy minute of the machine) costs no slot: the
 * starts it held back go at once when it ends. The log, not tau, keeps that within the server's window.
 */
export const CATCH_UP_MS = 50;
/** Margin beyond the window: whole-ms stamps and timers, plus the most NTP slews a clock (500 ppm). */
export function marginFor(windowMs: number): number {
  return 2 + windowMs * 0.0005;
}
/** The most start times the log keeps; a higher limit is guarded in proportion over a shorter span. */
const MAX_LOG = 65_536;

export interface Pacing {
  /** T: ms between theoretical start times. */
  readonly intervalMs: number;
  /** At most `guardCount` actual starts in any `guardSpanMs`. */
  readonly guardCount: number;
  readonly guardSpanMs: number;
  /** tau: how far behind `now` a start's theoretical time may be (catch-up after a late wake-up). */
  readonly catchUpMs: number;
  /** An unanswered call's entry in the log: its write plus this. */
  readonly pathMs: number;
  readonly marginMs: number;
}

export interface Slack {
  /** How late an unanswered call is taken to reach the server at most, after its write (default PATH_SLACK_MS). */
  readonly pathMs?: number;
  /** Ms kept beyond the window (default marginFor(window)); a 429 widens it (./paced.ts). */
  readonly marginMs?: number;
}

/** The pacing for a rate. A limit above MAX_LOG keeps a log of limit/m calls over (window + margin)/m. */
export function pacingFor(rate: Rate, slack: Slack = {}): Pacing {
  const marginMs = slack.marginMs ?? marginFor(rate.windowMs);
  const span = rate.windowMs + marginMs;
  const parts = Math.ceil(rate.limit / MAX_LOG);
  // A fractional limit (2.5/s) allows what a counting window admits, ceil(limit); the spacing keeps the rate.
  const guardCount = parts === 1 ? Math.max(1, Math.ceil(rate.limit)) : Math.floor(rate.limit / parts);
  return {
    intervalMs: span / rate.limit,
    guardCount,
    guardSpanMs: span / parts,
    catchUpMs: CATCH_UP_MS,
    pathMs: slack.pathMs ?? PATH_SLACK_MS,
    marginMs,
  };
}

/** Mean ms between starts at a rate (what `--plan` counts on; the answers' time a window comes on top). */
export function startIntervalMs(rate: Rate, slack: Slack = {}): number {
  return pacingFor(rate, slack).intervalMs;
}

export class Pacer {
  #p: Pacing;
  /** V of the next start (GCRA's theoretical arrival time). */
  #tat = -Infinity;
  /**
   * For each call, the latest the server can have stamped it: when its answer came back, or `pathMs` after its
   * request was written until then; Infinity until written.
   */
  #log: Float64Array;
  #head = 0;
  #size = 0;
  /** Starts taken so far: the log holds starts `#taken - #size` to `#taken - 1`. */
  #taken = 0;

  constructor(pacing: Pacing) {
    this.#p = pacing;
    this.#log = new Float64Array(pacing.guardCount);
  }

  get pacing(): Pacing {
    return this.#p;
  }

  /** Ms from `now` until a start is allowed (0 or less: now; Infinity: until the time of the entry it needs is fixed). */
  delay(now: number): number {
    const paced = this.#tat - now;
    if (this.#size < this.#log.length) return paced;
    const guarded = this.#log[this.#head] + this.#p.guardSpanMs - now;
    return Math.max(guarded, paced);
  }

  /**
   * Records a start at `now` of a job that could not have started before `notBefore` (when it was queued, or
   * the end of a pause); the caller checked `delay(now) <= 0`. Returns the start's number, for `sent` and
   * `answered`.
   */
  take(now: number, notBefore: number): number {
    let v = this.#tat;
    if (notBefore > v) v = notBefore;
    if (now - this.#p.catchUpMs > v) v = now - this.#p.catchUpMs;
    this.#tat = v + this.#p.intervalMs;
    const cap = this.#log.length;
    if (this.#size < cap) {
      this.#log[(this.#head + this.#size) % cap] = Infinity;
      this.#size += 1;
    } else {
      this.#log[this.#head] = Infinity;
      this.#head = this.#head + 1 === cap ? 0 : this.#head + 1;
    }
    this.#taken += 1;
    return this.#taken - 1;
  }

  /** Start `n`'s request was written to a connection at `now`. */
  sent(n: number, now: number): void {
    this.#bound(n, now + this.#p.pathMs);
  }

  /** Start `n` was answered, or failed, at `now`: the server stamped it no later, if it got it at all. */
  answered(n: number, now: number): void {
    this.#bound(n, now);
  }

  /**
   * Start `n` was cut by this side at `now` without an answer. Written: the server may still stamp it up to
   * its write plus `pathMs`, which its entry already says (the cut must not bring that earlier). Never
   * written: it never reaches the server; its entry's time is fixed at the cut.
   */
  cut(n: number, now: number): void {
    const oldest = this.#taken - this.#size;
    if (n < oldest || n >= this.#taken) return;
    const at = (this.#head + (n - oldest)) % this.#log.length;
    if (this.#log[at] === Infinity) this.#log[at] = now;
  }

  /** The server stamped start `n` no later than `latest`. */
  #bound(n: number, latest: number): void {
    const oldest = this.#taken - this.#size;
    if (n < oldest || n >= this.#taken) return;
    const at = (this.#head + (n - oldest)) % this.#log.length;
    if (latest < this.#log[at]) this.#log[at] = latest;
  }

  /** A new rate (the adaptive limiter): the schedule goes on from where it is, the log keeps its latest starts. */
  setPacing(pacing: Pacing): void {
    const kept = Math.min(this.#size, pacing.guardCount);
    const log = new Float64Array(pacing.guardCount);
    for (let i = 0; i < kept; i += 1) log[i] = this.#log[(this.#head + this.#size - kept + i) % this.#log.length];
    this.#log = log;
    this.#head = 0;
    this.#size = kept;
    // The next start comes one new interval after the last one.
    if (Number.isFinite(this.#tat)) this.#tat += pacing.intervalMs - this.#p.intervalMs;
    this.#p = pacing;
  }
}
