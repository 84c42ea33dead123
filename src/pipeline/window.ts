/**
 * The rows in flight: a bounded window the reader waits on, so memory is flat whatever the input size, and
 * a count of rows still running that the end of the run waits for.
 */
import type { ServiceName } from '@bre-batch/core/types';

/**
 * Rows in flight: every call slot of every service the pipeline uses, plus 15% prepared and waiting so that
 * a slot never idles. Not more: each row held costs the garbage collector (docs/performance.md).
 */
export function windowSize(
  concurrency: Readonly<Record<ServiceName, number>>,
  services: ReadonlySet<ServiceName>,
): number {
  let slots = 0;
  for (const svc of services) slots += concurrency[svc];
  return windowOfSlots(slots);
}

/** The window for this many call slots (windowSize). */
export const windowOfSlots = (slots: number): number => Math.max(16, Math.ceil(slots * 1.15));

/** Rows entered between two looks at the size while the window has room (it may shrink as answers speed up). */
const RESIZE_EVERY = 256;
/** How often a reader waiting on a full window looks whether it has grown (the calls in flight it follows grow as they age). */
const GROW_POLL_MS = 100;

export class RowWindow {
  /** The size now: a number, or what the calls in flight allow (../limits/in-flight.ts), looked at now and then. */
  readonly #sizeOf: () => number;
  #size: number;
  /** Places taken: rows running, and places entered but not started yet. */
  #taken = 0;
  #sinceResize = 0;
  readonly #waiters: (() => void)[] = [];
  #poll: NodeJS.Timeout | undefined;
  #inflight = 0;
  #drained: (() => void) | undefined;

  constructor(size: number | (() => number)) {
    this.#sizeOf = typeof size === 'number' ? () => size : size;
    this.#size = this.#sizeOf();
  }

  /** The size it holds to now. */
  get size(): number {
    return this.#size;
  }

  /** Waits for a free place (no promise when there is one: the common case of a run that keeps up). */
  enter(): Promise<void> | undefined {
    if (this.#waiters.length === 0) {
      if ((this.#sinceResize += 1) >= RESIZE_EVERY || this.#taken >= this.#size) this.#resize();
      if (this.#taken < this.#size) {
        this.#taken += 1;
        return undefined;
      }
    }
    const waiting = new Promise<void>((resolve) => this.#waiters.push(resolve));
    this.#pollWhileWaiting();
    return waiting;
  }

  /** A place taken with enter() but not used (the run stopped meanwhile). */
  giveBack(): void {
    this.#release();
  }

  /** A row starts running in its place. */
  started(): void {
    this.#inflight += 1;
  }

  /** A started row has ended (its line is written): its place is free again. */
  ended(): void {
    this.#inflight -= 1;
    this.#release();
    if (this.#inflight === 0) this.#drained?.();
  }

  /** Resolves once no row is running. */
  drained(): Promise<void> {
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#drained = resolve));
  }

  #release(): void {
    this.#taken -= 1;
    this.#admit();
  }

  #resize(): void {
    this.#sinceResize = 0;
    this.#size = Math.max(1, this.#sizeOf());
  }

  /** Lets waiting readers in while there is room. */
  #admit(): void {
    if (this.#waiters.length > 0 && this.#taken >= this.#size) this.#resize();
    while (this.#waiters.length > 0 && this.#taken < this.#size) {
      this.#taken += 1;
      this.#waiters.shift()!();
    }
  }

  /**
   * A full window whose calls are all slow sees no row end for a while; it may still have grown. The timer is
   * cleared by its own tick once no reader waits, not as each waiting reader enters: a window kept full by fast
   * rows has a reader waiting at nearly every row, and a timer made and cleared for each was a Timeout and its
   * closure allocated a row (docs/history.md, 2026-11-29).
   */
  #pollWhileWaiting(): void {
    if (this.#poll) return;
    this.#poll = setInterval(() => {
      if (this.#waiters.length > 0) this.#admit();
      else {
        clearInterval(this.#poll);
        this.#poll = undefined;
      }
    }, GROW_POLL_MS);
    this.#poll.unref();
  }
}
