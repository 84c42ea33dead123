/**
 * The in-process limiter of a service: starts paced by ./pacer.ts (GCRA plus a sliding log of actual starts)
 * when the service has a rate, and a cap on attempts in flight always. It owns one timer at most, armed for
 * the next start that has to wait; every wake-up, and every finished attempt, releases all the starts that
 * are due, so the rate it reaches does not depend on how many timers a second the event loop can fire.
 *
 * Why not a library: Bottleneck starts every job from a timer tick of its own (SGrondin/bottleneck#144);
 * p-throttle (strict mode) arms a timer per call and has no priority, cap or pause; p-queue's `interval` is a
 * fixed window, which lets through up to twice the limit across a boundary of a server's sliding window.
 * Bottleneck stays where Redis must arbitrate between processes (./redis.ts).
 *
 * An attempt that can start at once starts inside `schedule` and its own promise is returned: without a rate
 * (the back-testing case) that is nearly every attempt, and it costs no promise of the limiter's own.
 */
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import { InFlight, type Flight } from './in-flight.js';
import { wasCut, type InFlightView, type LimiterStats, type ServiceLimiter } from './limiter.js';
import { Pacer, pacingFor, type Slack } from './pacer.js';
import type { Rate } from '@bre-batch/core/rates';
import { Throttle } from './throttle.js';

/** Time and timers, injected so that tests never wait on real time. */
export interface Clock {
  /**
   * Milliseconds, monotonic, from a recent origin: performance.now(), not epoch ms, whose doubles are too
   * coarse (2^-12 ms near 1.7e12) to add a 0.2 ms interval thousands of times without drifting.
   */
  now(): number;
  /** Epoch ms (for `pausedUntil`, which callers compare with Date.now()). */
  wall(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  wall: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface PacedLimiterOptions {
  readonly service: ServiceName;
  /** null: no spacing, only the cap on attempts in flight. */
  readonly rate: Rate | null;
  /**
   * Most attempts in flight (--concurrency). With a rate, the attempts in flight follow the latency measured up
   * to this bound (./in-flight.ts); without one, or with `followLatency: false`, this is the cap.
   */
  readonly concurrency: number;
  readonly followLatency?: boolean;
  /** The path bound and the margin beyond the window (defaults: ./pacer.ts). */
  readonly slack?: Slack;
  /** Whether a 429 widens the margin (default true; the adaptive limiter lowers its rate instead). */
  readonly widenOn429?: boolean;
  /** Default: the real clock and timers. */
  readonly clock?: Clock;
  /** The back-off's jitter (tests). */
  readonly random?: () => number;
}

/** The most a 429 widens the margin to (and a tenth of the window). */
const MAX_WIDENED_MARGIN_MS = 1000;
/** The least a 429 widens the margin to: a 429 says the margin was off by more than whole-ms rounding. */
const MIN_WIDENED_MARGIN_MS = 20;
/** The most a 429 widens the path bound to (and the window). */
const MAX_WIDENED_PATH_MS = 2000;

/** The least time between two checks of a cap growing as its oldest call ages. */
const GROWTH_CHECK_MS = 50;

/** What a start without a pacer is given to call when its request is written. */
const UNPACED = (): void => {};

interface Job {
  readonly fn: (sent: () => void) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  readonly queuedAt: number;
}

/** A FIFO of jobs: an array read from a moving head, compacted now and then (shift() is O(n)). */
class JobQueue {
  #items: (Job | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(job: Job): void {
    this.#items.push(job);
  }

  shift(): Job {
    const job = this.#items[this.#head]!;
    this.#items[this.#head] = undefined;
    this.#head += 1;
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return job;
  }

  drain(): Job[] {
    const jobs = this.#items.slice(this.#head) as Job[];
    this.#items = [];
    this.#head = 0;
    return jobs;
  }
}

export class PacedLimiter implements ServiceLimiter {
  readonly service: ServiceName;
  /** Epoch ms before which no attempt starts (after a 429). */
  pausedUntil = 0;
  /** The same on this limiter's clock. */
  #pauseEnd = -Infinity;
  /** Requests a minute the limiter allows; null without a rate. */
  protected perMinute: number | null;
  readonly #clock: Clock;
  #slack: Slack;
  #rate: Rate | null;
  readonly #widen: boolean;
  #widenedAt = -Infinity;
  readonly #inFlight: InFlight;
  readonly #follow: boolean;
  readonly #throttle: Throttle;
  #pacer: Pacer | null;
  readonly #retries = new JobQueue();
  readonly #firsts = new JobQueue();
  #timer: unknown = undefined;
  #timerAt = Infinity;
  #growTimer: unknown = undefined;
  #pumping = false;
  #stopped = false;
  #waitMs = 0;
  #scheduled = 0;
  /** Mean ms between finished attempts (an estimate for nextStartInMs when the cap is what holds starts). */
  #finishGapMs = 0;
  #lastFinish = 0;

  constructor(opts: PacedLimiterOptions) {
    this.service = opts.service;
    this.#clock = opts.clock ?? realClock;
    this.#slack = opts.slack ?? {};
    this.#rate = opts.rate;
    this.#widen = opts.widenOn429 ?? true;
    this.#pacer = opts.rate ? new Pacer(pacingFor(opts.rate, opts.slack)) : null;
    this.#follow = opts.followLatency ?? true;
    this.#inFlight = new InFlight({
      perMs: this.#follow && opts.rate ? opts.rate.limit / opts.rate.windowMs : null,
      bound: opts.concurrency,
    });
    this.#throttle = new Throttle(opts.random ? { random: opts.random } : {});
    this.perMinute = opts.rate ? perMinuteOf(opts.rate) : null;
  }

  schedule<T>(fn: (sent: () => void) => Promise<T>, retry = false): Promise<T> {
    this.#scheduled += 1;
    if (this.#stopped) return Promise.reject(this.#stoppedError());
    const now = this.#clock.now();
    if (
      this.#retries.size + this.#firsts.size === 0 &&
      this.#inFlight.running < this.#inFlight.cap(now) &&
      this.#delay(now) <= 0
    ) {
      return this.#start(fn, this.#pacer ? this.#pacer.take(now, now) : -1);
    }
    return new Promise<T>((resolve, reject) => {
      (retry ? this.#retries : this.#firsts).push({
        fn,
        resolve: resolve as (value: unknown) => void,
        reject,
        queuedAt: now,
      });
      this.#pump();
    });
  }

  /**
   * The service's pause after a 429: the documented back-off for this spell (./throttle.ts), or a longer
   * Retry-After; never shorter than the back-off, whatever the Retry-After says.
   */
  onThrottled(retryAfterSeconds?: number): void {
    const now = this.#clock.now();
    const wall = this.#clock.wall();
    const ms = this.#throttle.refused(now, wall, retryAfterSeconds);
    this.pausedUntil = Math.max(this.pausedUntil, wall + ms);
    this.#pauseEnd = Math.max(this.#pauseEnd, now + ms);
    if (this.#widen) this.#widenSlack(now);
  }

  get throttledSince(): number | null {
    return this.#throttle.since;
  }

  onAnswered(): void {
    this.#throttle.answered();
  }

  inFlightCap(): number {
    return this.#inFlight.cap(this.#clock.now());
  }

  inFlight(): InFlightView {
    const now = this.#clock.now();
    const f = this.#inFlight;
    return {
      running: f.running,
      cap: f.cap(now),
      bound: f.bound,
      latencyMs: Math.round(f.latencyMs(now)),
      meanLatencyMs: Math.round(f.meanLatencyMs),
      wanted: f.wanted(now),
      boundHolding: f.boundHolding(now),
      boundHeldMs: Math.round(f.boundHeldMs),
      wantedAtHold: f.wantedAtHold,
    };
  }

  /**
   * A 429 at a rate the server was told to expect, with every call logged at its answer, means the server got
   * a call more than the path bound after its write while its answer was slower still (a server or machine so
   * loaded that requests wait before it reads them), counts more than this process sent (another client on
   * the same IP), or measures the window otherwise (a drifting clock). Each 429 costs the whole service a
   * pause, so both double, at most once per window (one late burst draws several 429s): the path bound up to
   * the window or 2 s, the margin (to 20 ms at least) up to a tenth of the window or 1 s.
   */
  #widenSlack(now: number): void {
    const rate = this.#rate;
    if (!rate || !this.#pacer || now - this.#widenedAt < rate.windowMs) return;
    const { pathMs: path, marginMs: margin } = this.#pacer.pacing;
    const pathMs = Math.min(Math.max(path, Math.min(rate.windowMs, MAX_WIDENED_PATH_MS)), path * 2);
    const marginCap = Math.max(margin, Math.min(rate.windowMs / 10, MAX_WIDENED_MARGIN_MS));
    const marginMs = Math.min(marginCap, Math.max(MIN_WIDENED_MARGIN_MS, margin * 2));
    if (pathMs === path && marginMs === margin) return;
    this.#widenedAt = now;
    this.#slack = { pathMs, marginMs };
    this.#pacer.setPacing(pacingFor(rate, this.#slack));
  }

  onSuccess(): void {
    this.#throttle.answered();
  }

  /** Ms until an attempt scheduled now could start: the pause, the pacing, the queue ahead of it, the cap. */
  nextStartInMs(): number {
    const now = this.#clock.now();
    const ahead = this.#retries.size + this.#firsts.size;
    let ms = this.#pauseEnd - now;
    if (this.#pacer) {
      // A call not written yet holds the next start until it is: about one more interval.
      const paced = this.#pacer.delay(now);
      ms = Math.max(
        ms,
        (paced === Infinity ? this.#pacer.pacing.intervalMs : paced) + ahead * this.#pacer.pacing.intervalMs,
      );
    }
    if (this.#inFlight.running >= this.#inFlight.cap(now)) ms = Math.max(ms, (ahead + 1) * this.#finishGapMs);
    return Math.max(ms, 0);
  }

  stats(): LimiterStats {
    return {
      waitMs: Math.round(this.#waitMs),
      scheduled: this.#scheduled,
      currentPerMinute: this.perMinute,
      ...(this.#pacer ? { slackMs: this.#pacer.pacing.pathMs, marginMs: round2(this.#pacer.pacing.marginMs) } : {}),
      inFlight: this.inFlight(),
    };
  }

  /** Attempts still queued are rejected (INTERRUPTED, never sent); attempts in flight are left to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#disarm();
    if (this.#growTimer !== undefined) this.#clock.clearTimer(this.#growTimer);
    this.#growTimer = undefined;
    const err = this.#stoppedError();
    for (const job of [...this.#retries.drain(), ...this.#firsts.drain()]) job.reject(err);
  }

  /** A new rate (the adaptive limiter). */
  protected setRate(rate: Rate): void {
    this.#rate = rate;
    this.perMinute = perMinuteOf(rate);
    if (this.#follow) this.#inFlight.setRate(rate.limit / rate.windowMs);
    const pacing = pacingFor(rate, this.#slack);
    if (this.#pacer) this.#pacer.setPacing(pacing);
    else this.#pacer = new Pacer(pacing);
    this.#pump();
  }

  /** Ms from `now` until a start may happen: the pause after a 429, then the pacing. */
  #delay(now: number): number {
    const paused = this.#pauseEnd - now;
    if (!this.#pacer) return paused;
    const paced = this.#pacer.delay(now);
    return Math.max(paced, paused);
  }

  /** `n`: the pacer's number for this start (its entry's time is fixed when sent, or answered), or -1 without one. */
  #start<T>(fn: (sent: () => void) => Promise<T>, n: number): Promise<T> {
    const flight = this.#inFlight.started(this.#clock.now());
    const pacer = this.#pacer;
    let p: Promise<T>;
    try {
      p = fn(pacer && n >= 0 ? () => this.#sent(pacer, n) : UNPACED);
    } catch (err) {
      p = Promise.reject(err);
    }
    if (!pacer || n < 0) {
      const done = (): void => this.#finished(flight);
      p.then(done, done);
    } else {
      const answered = (): void => {
        pacer.answered(n, this.#clock.now());
        this.#finished(flight);
      };
      // A cut attempt keeps its entry at its write plus the path bound (./pacer.ts): the server may count it later.
      const failed = (err: unknown): void => {
        if (wasCut(err)) pacer.cut(n, this.#clock.now());
        else pacer.answered(n, this.#clock.now());
        this.#finished(flight);
      };
      p.then(answered, failed);
    }
    return p;
  }

  #sent(pacer: Pacer, n: number): void {
    pacer.sent(n, this.#clock.now());
    // A start held by this entry (a window later, so rarely) goes now rather than at the next answer.
    if (this.#timer === undefined && this.#retries.size + this.#firsts.size > 0) this.#pump();
  }

  #finished(flight: Flight): void {
    const now = this.#clock.now();
    this.#inFlight.finished(flight, now);
    if (this.#lastFinish > 0) this.#finishGapMs += (now - this.#lastFinish - this.#finishGapMs) / 16;
    this.#lastFinish = now;
    if (this.#retries.size + this.#firsts.size > 0) this.#pump();
  }

  /** Starts every queued job that may start now (retries first); arms the timer for the next one. */
  #pump(): void {
    // A job's fn may schedule again synchronously: the loop below already takes care of the queue.
    if (this.#pumping || this.#stopped) return;
    this.#pumping = true;
    try {
      for (;;) {
        const queue = this.#retries.size > 0 ? this.#retries : this.#firsts;
        if (queue.size === 0) break;
        const now = this.#clock.now();
        if (this.#inFlight.running >= this.#inFlight.cap(now)) {
          // Held by the cap: a finish pumps again, and so does the oldest call ageing past what the cap assumed.
          this.#inFlight.held(now);
          this.#armGrowth(now);
          break;
        }
        const wait = this.#delay(now);
        if (wait > 0) {
          this.#arm(now + wait);
          break;
        }
        const job = queue.shift();
        // A pause builds no credit either: the spacing starts again from its end.
        const n = this.#pacer ? this.#pacer.take(now, Math.max(job.queuedAt, this.#pauseEnd)) : -1;
        this.#waitMs += now - job.queuedAt;
        this.#start(job.fn, n).then(job.resolve, job.reject);
      }
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * The cap's own timer (./in-flight.ts `growsAt`), apart from the pacing's so that neither moves the other:
   * at most one armed, and at most 20 wake-ups a second (a start held 50 ms is made up by the pacing's catch-up).
   */
  #armGrowth(now: number): void {
    if (this.#growTimer !== undefined) return;
    const at = this.#inFlight.growsAt(now);
    if (!Number.isFinite(at)) return;
    this.#growTimer = this.#clock.setTimer(
      () => {
        this.#growTimer = undefined;
        this.#pump();
      },
      Math.max(GROWTH_CHECK_MS, Math.ceil(at - now)),
    );
  }

  #arm(at: number): void {
    // Infinity: the time of an entry of the log is not fixed yet; its request's write or answer pumps.
    if (!Number.isFinite(at) || (this.#timer !== undefined && this.#timerAt <= at)) return;
    this.#disarm();
    this.#timerAt = at;
    // Whole ms: timers have 1 ms steps; one that fires early finds the wait not over and arms again.
    this.#timer = this.#clock.setTimer(this.#wake, Math.max(1, Math.ceil(at - this.#clock.now())));
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  readonly #wake = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#pump();
  };

  #stoppedError(): BreError {
    return new BreError('INTERRUPTED', `${this.service} call abandoned: the run is stopping`, {
      service: this.service,
    });
  }
}

function round2(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function perMinuteOf(rate: Rate): number {
  return (rate.limit * 60_000) / rate.windowMs;
}
