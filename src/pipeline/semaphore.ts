/** Bounds the rows in flight: the reader waits for a free slot, so memory is flat whatever the input size. */
export class Semaphore {
  #free: number;
  readonly #waiters: (() => void)[] = [];

  constructor(slots: number) {
    this.#free = slots;
  }

  /** Takes a free slot at once if there is one (no promise: the common case of a run that keeps up). */
  tryAcquire(): boolean {
    if (this.#free > 0 && this.#waiters.length === 0) {
      this.#free -= 1;
      return true;
    }
    return false;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free += 1;
  }
}
