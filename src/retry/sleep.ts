/**
 * The one sleep every wait of the program goes through (retry backoff, polling, the HTTP chain's pauses).
 * Aborted, it rejects at once with the signal's reason, so a stopping run is never held by a pause.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A loop's pause between two looks that another part may cut short (a finish, a stop, a chunk lost). */
export class Nap {
  #wake: (() => void) | undefined;

  /** Until `ms` have passed, or `wake`. */
  async take(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  /** Ends the pause now, if one is being taken. */
  wake(): void {
    this.#wake?.();
  }
}
