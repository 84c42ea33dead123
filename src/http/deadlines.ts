/**
 * The whole-attempt deadline (--timeout): every attempt in flight is cut when its time is up, whatever it is
 * doing then (waiting for a connection, connecting, waiting for the headers, or reading a body trickled a
 * byte at a time). undici's headersTimeout and bodyTimeout bound only the silence between bytes (an
 * answer sent one byte a second never timed out).
 *
 * One timer for all of them, not a timer or an AbortController per attempt (at thousands of calls a second
 * each costs allocations and event-listener work on the hot path, ./transport.ts): attempts are queued in
 * the order they started, one queue per time-out length, so each queue is also in deadline order. The timer
 * is armed for the earliest deadline; an attempt that finishes only marks itself done, and finished attempts
 * are dropped from the head of their queue as it moves (amortised O(1)), or all at once when a queue grows
 * well past the attempts still live (one slow attempt at the head holds back the ones behind it).
 */
import { BreError } from '@bre-batch/core/errors';
import { realClock, type Clock } from '../limits/paced.js';
import type { ServiceName } from '@bre-batch/core/types';

/** What the deadlines keep of an attempt. */
export interface Expiring {
  /** True once the attempt has settled (its answer came, or it failed): its deadline no longer matters. */
  readonly done: boolean;
  /** Called once, when the deadline passes before the attempt is done; it then settles (and says so). */
  expire(): void;
}

interface Entry {
  readonly at: number;
  readonly item: Expiring;
}

/** A FIFO read from a moving head (Array#shift is O(n)). */
class Lane {
  items: (Entry | undefined)[] = [];
  head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  peek(): Entry | undefined {
    return this.items[this.head];
  }

  shift(): void {
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Drops the finished entries wherever they are (the live ones keep their order). */
  compact(): void {
    this.items = this.items.slice(this.head).filter((e) => e !== undefined && !e.item.done);
    this.head = 0;
  }
}

/** A queue is compacted when it holds this many entries and over four times the live ones. */
const COMPACT_AT = 4096;

export class Deadlines {
  readonly #clock: Clock;
  readonly #lanes = new Map<number, Lane>();
  #timer: unknown = undefined;
  #timerAt = Infinity;
  /** Attempts added and not yet done or expired (an upper bound: `done` is read lazily). */
  #live = 0;

  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  /** `item` must be done, or expired, within `ms` from now. */
  add(ms: number, item: Expiring): void {
    let lane = this.#lanes.get(ms);
    if (!lane) this.#lanes.set(ms, (lane = new Lane()));
    this.#dropDone(lane);
    if (lane.size >= COMPACT_AT && lane.size > 4 * this.#live) lane.compact();
    const at = this.#clock.now() + ms;
    lane.items.push({ at, item });
    this.#live += 1;
    this.#arm(at);
  }

  /**
   * An attempt added here settled, its deadline included (each calls it once): keeps the count of live
   * attempts, which says when to compact.
   */
  settled(): void {
    if (this.#live > 0) this.#live -= 1;
  }

  /** Attempts queued, finished ones not yet dropped included (for tests of the bookkeeping). */
  get queued(): number {
    let n = 0;
    for (const lane of this.#lanes.values()) n += lane.size;
    return n;
  }

  /** Stops the timer; attempts still queued are not expired any more (the transport is closing). */
  clear(): void {
    this.#disarm();
    this.#lanes.clear();
    this.#live = 0;
  }

  #dropDone(lane: Lane): void {
    for (let e = lane.peek(); e?.item.done; e = lane.peek()) lane.shift();
  }

  readonly #wake = (): void => {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    let next = Infinity;
    for (const [ms, lane] of this.#lanes) {
      for (let e = lane.peek(); e !== undefined; e = lane.peek()) {
        if (e.item.done) {
          lane.shift();
          continue;
        }
        if (e.at > now) break;
        lane.shift();
        e.item.expire();
      }
      const head = lane.peek();
      if (head === undefined) this.#lanes.delete(ms);
      else if (head.at < next) next = head.at;
    }
    this.#arm(next);
  };

  #arm(at: number): void {
    if (!Number.isFinite(at) || (this.#timer !== undefined && this.#timerAt <= at)) return;
    this.#disarm();
    this.#timerAt = at;
    // Whole ms, at least 1: a wake-up a little early finds nothing due and arms again.
    const handle = this.#clock.setTimer(this.#wake, Math.max(1, Math.ceil(at - this.#clock.now())));
    // Attempts in flight keep the process alive through their sockets; the timer alone must not.
    (handle as { unref?: () => void } | undefined)?.unref?.();
    this.#timer = handle;
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }
}

/** The reason a request is aborted with when its attempt's deadline passes. */
export class DeadlinePassed extends Error {
  constructor() {
    super("the attempt's deadline passed");
    this.name = 'DeadlinePassed';
  }
}

/** What a cut attempt fails with, whichever timer cut it (this one, or undici's own beneath it). */
export function timeoutError(service: ServiceName, timeoutMs: number): BreError {
  return new BreError(
    'TIMEOUT',
    `${service} service did not answer in full within ${timeoutMs} ms (--timeout bounds the whole attempt: connecting, the headers and the body)`,
    { service },
  );
}

/**
 * One attempt's deadline, handed down to the transport, which owns the request it aborts: it binds the
 * request once it has a connection, just before writing it. Cut before that, the request is never written.
 */
export class AttemptDeadline implements Expiring {
  #done = false;
  #expired = false;
  #abort: ((reason: Error) => void) | undefined;
  readonly #onExpire: () => void;

  constructor(onExpire: () => void) {
    this.#onExpire = onExpire;
  }

  get done(): boolean {
    return this.#done;
  }

  /** The transport's hook: false when the deadline has already passed (the request must not be written). */
  bind(abort: (reason: Error) => void): boolean {
    if (this.#expired) return false;
    if (!this.#done) this.#abort = abort;
    return true;
  }

  /** The attempt settled in time; false when its deadline had passed first (it already failed). */
  settle(): boolean {
    if (this.#done) return false;
    this.#done = true;
    this.#abort = undefined;
    return true;
  }

  expire(): void {
    if (this.#done) return;
    this.#done = true;
    this.#expired = true;
    const abort = this.#abort;
    this.#abort = undefined;
    this.#onExpire();
    abort?.(new DeadlinePassed());
  }
}

/**
 * Runs one attempt under a deadline of `ms`: it fails with `timedOut()` the moment the deadline passes, without
 * waiting for the request to wind down (the transport aborts it through the deadline it was given).
 */
export function withinDeadline<R>(
  deadlines: Deadlines,
  ms: number,
  run: (deadline: AttemptDeadline) => Promise<R>,
  timedOut: () => Error,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const deadline = new AttemptDeadline(() => {
      deadlines.settled();
      reject(timedOut());
    });
    deadlines.add(ms, deadline);
    const settle = (): boolean => {
      if (!deadline.settle()) return false;
      deadlines.settled();
      return true;
    };
    let attempt: Promise<R>;
    try {
      attempt = run(deadline);
    } catch (err) {
      if (settle()) reject(err);
      return;
    }
    attempt.then(
      (value) => {
        if (settle()) resolve(value);
      },
      (err: unknown) => {
        if (settle()) reject(err);
      },
    );
  });
}
