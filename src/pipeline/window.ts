/**
 * The rows in flight: a bounded window the reader waits on, so memory is flat whatever the input size, and
 * a count of rows still running that the end of the run waits for.
 */
import type { ServiceName } from '../types.js';
import { Semaphore } from './semaphore.js';

/**
 * Rows in flight: every call slot of every service the pipeline uses, plus 15% prepared and waiting so that
 * a slot never idles. Not more: each row held costs the garbage collector (README: Performance).
 */
export function windowSize(concurrency: Readonly<Record<ServiceName, number>>, services: ReadonlySet<ServiceName>): number {
  let slots = 0;
  for (const svc of services) slots += concurrency[svc];
  return Math.max(16, Math.ceil(slots * 1.15));
}

export class RowWindow {
  readonly #slots: Semaphore;
  #inflight = 0;
  #drained: (() => void) | undefined;

  constructor(size: number) {
    this.#slots = new Semaphore(size);
  }

  /** Waits for a free place (no promise when there is one: the common case of a run that keeps up). */
  enter(): Promise<void> | undefined {
    if (this.#slots.tryAcquire()) return undefined;
    return this.#slots.acquire();
  }

  /** A place taken with enter() but not used (the run stopped meanwhile). */
  giveBack(): void {
    this.#slots.release();
  }

  /** A row starts running in its place. */
  started(): void {
    this.#inflight += 1;
  }

  /** A started row has ended (its line is written): its place is free again. */
  ended(): void {
    this.#slots.release();
    this.#inflight -= 1;
    if (this.#inflight === 0) this.#drained?.();
  }

  /** Resolves once no row is running. */
  drained(): Promise<void> {
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#drained = resolve));
  }
}
