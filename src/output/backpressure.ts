/**
 * How far a writer may fall behind the run before the run waits for it: a high and a low water mark with their
 * waiters. The run asks `room` before each row; the writer `wake`s the waiters as it catches up, and `lift`s
 * the wait for good when it fails or ends (nothing more to wait for).
 */

/** Journal bytes behind which the run waits (the sink's lag is bounded, not the memory). */
export const HIGH_WATER = 64 * 1024 * 1024;
/** Journal bytes under which a waiting run goes on again. */
export const LOW_WATER = 32 * 1024 * 1024;

export class Backpressure {
  readonly #waiters: (() => void)[] = [];
  #lifted = false;

  constructor(
    readonly high = HIGH_WATER,
    readonly low = LOW_WATER,
  ) {}

  /**
   * undefined while `lag()` is under the high mark; else a promise that settles once it is under the low mark,
   * looked at again at each `wake`, or at once when the wait is lifted.
   */
  room(lag: () => number): Promise<void> | undefined {
    if (this.#lifted || lag() < this.high) return undefined;
    return new Promise((resolve) => {
      const check = () => {
        if (this.#lifted || lag() < this.low) resolve();
        else this.#waiters.push(check);
      };
      this.#waiters.push(check);
    });
  }

  /** The writer moved on: every waiter looks at its lag again. */
  wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The writer failed or ended: every waiter goes on, and no later `room` waits. */
  lift(): void {
    this.#lifted = true;
    this.wake();
  }
}
