/**
 * The teardown of what a run holds, as a stack (src/pipeline/run.ts): each part registers how it is given back
 * as soon as it is acquired, and closing runs those steps in reverse, once, whichever step of the opening or of
 * the run failed. It is what `AsyncDisposableStack` does; Node 20, which the product supports, has none.
 *
 * - Every step runs, even when one before it throws: the first error is the one `close` rejects with, the
 *   later ones go to `suppressed` (the run logs them), so one failure never hides a part left held. A caller
 *   closing on a failure of its own (`failing`) has that one to throw: every step's goes to `suppressed`.
 * - A step can be run early through the function `defer` returns (the run lets go of its services before
 *   writing its end files); it then runs once, its failure is its caller's, and close only waits for it.
 * - `close` is idempotent: a second call returns the first one's promise.
 * - Steps run by close are told how the run ended (`end`: the monitor writes it in the time series); a step run
 *   early is told nothing (undefined).
 */
import { internalError } from '@bre-batch/core/errors';

interface Step<E> {
  readonly name: string;
  readonly dispose: (end: E | undefined) => unknown;
  /** Set once the step has begun (early, or by close). */
  ran?: Promise<void>;
}

export class Disposer<E = void> {
  readonly #steps: Step<E>[] = [];
  #closing: Promise<void> | undefined;

  /** `suppressed`: told of each failure of a step after the first (the one close rejects with). */
  constructor(private readonly suppressed: (err: unknown, step: string) => void = () => undefined) {}

  /**
   * Registers the teardown of a part just acquired. Returns a function that runs it now (once: close then
   * skips it; a later call returns the first call's promise). Registering once closing has begun is a bug: the
   * part would never be given back.
   */
  defer(name: string, dispose: (end: E | undefined) => unknown): () => Promise<void> {
    if (this.#closing) throw internalError(new Error(`${name} was acquired after the run began closing`));
    const step: Step<E> = { name, dispose };
    this.#steps.push(step);
    return () => Disposer.#run(step, undefined);
  }

  static #run<E>(step: Step<E>, end: E | undefined): Promise<void> {
    step.ran ??= (async () => {
      await step.dispose(end);
    })();
    return step.ran;
  }

  /** Whether closing has begun. */
  get closed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Runs every step not yet run, the last registered first; rejects with the first failure once all have run
   * (unless `failing`: then every failure is told to `suppressed`).
   */
  close(end: E, failing = false): Promise<void> {
    this.#closing ??= this.#disposeAll(end, failing);
    return this.#closing;
  }

  async #disposeAll(end: E, failing: boolean): Promise<void> {
    let first: { readonly err: unknown } | undefined;
    for (let i = this.#steps.length - 1; i >= 0; i -= 1) {
      const step = this.#steps[i];
      if (step.ran) {
        // Run early by its owner, who was told how it went.
        await step.ran.catch(() => undefined);
        continue;
      }
      try {
        await Disposer.#run(step, end);
      } catch (err) {
        if (first === undefined && !failing) first = { err };
        else this.suppressed(err, step.name);
      }
    }
    if (first !== undefined) throw first.err;
  }
}
