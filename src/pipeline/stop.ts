/**
 * How a run stops. A stop (a signal, 401/403, the circuit breaker, a failing disk) first stops taking rows
 * and abandons attempts still queued; calls already sent may finish for --stop-grace, then are abandoned too.
 * A second signal abandons them at once.
 */
import type { Log } from '../log/logger.js';
import { setMaxListeners } from 'node:events';
import { BreError, diskFullCode, diskFullError, isBreError, outputUnwritable } from '../errors.js';

/**
 * Why a run stops when its output folder cannot be written: DISK_FULL on a full disk (ENOSPC, EDQUOT),
 * OUTPUT_UNWRITABLE for any other failure of the folder (an I/O error, a file-size limit). Exit 3 either way:
 * a re-run resumes. A thread that met the failure has already said which (its BreError is kept).
 */
export function writeFailureStop(outDir: string, err: unknown): BreError {
  if (isBreError(err) && (err.code === 'DISK_FULL' || err.code === 'OUTPUT_UNWRITABLE')) return err;
  if (diskFullCode(err)) return diskFullError(outDir, err);
  return outputUnwritable(outDir, err);
}

export class RunStop {
  /** Aborted at the stop: no new rows, queued attempts and backoff sleeps give up. */
  readonly #soft = new AbortController();
  /** Aborted after the grace period: calls in flight are abandoned. */
  readonly #hard = new AbortController();
  #reason: BreError | undefined;
  #grace: NodeJS.Timeout | undefined;

  constructor(private readonly graceMs: number) {
    // Every call in flight listens on these two signals: hundreds of listeners is expected, not a leak.
    setMaxListeners(0, this.#soft.signal, this.#hard.signal);
  }

  get signal(): AbortSignal {
    return this.#soft.signal;
  }

  get hardSignal(): AbortSignal {
    return this.#hard.signal;
  }

  /** Why the run stopped; undefined while it goes on. */
  get reason(): BreError | undefined {
    return this.#reason;
  }

  request(why: BreError): void {
    if (this.#reason) return;
    this.#reason = why;
    this.#soft.abort(why);
    this.#grace = setTimeout(() => this.#hard.abort(why), this.graceMs);
    this.#grace.unref();
  }

  /**
   * SIGINT and SIGTERM stop the run; a second one abandons the calls in flight. Returns the function that
   * removes the handlers.
   */
  listen(log: Log): () => void {
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.#reason) {
        this.#hard.abort();
        return;
      }
      log(`${sig} received: finishing the calls in flight (up to ${Math.round(this.graceMs / 1000)} s), then stopping; re-run the same command to resume`, { level: 'warn', code: 'INTERRUPTED' });
      this.request(new BreError('INTERRUPTED', `interrupted by ${sig}`));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    return () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  }

  /** Nothing is in flight any more: the grace timer has nothing left to abandon. */
  dispose(): void {
    clearTimeout(this.#grace);
  }
}
