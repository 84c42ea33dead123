/**
 * What a run holds between its steps (src/pipeline/runner.ts), each part a readonly field set once, and its
 * lifecycle: `Run.open` acquires the parts in order (src/pipeline/run-open.ts, where the order is written),
 * each registering its teardown as soon as it is held; `close` gives them back in reverse, once, whichever
 * step failed: every step runs, the first failure is thrown and the later ones are logged. The journals are
 * closed (`closeJournals`) and the monitor finished (`finishMonitor`, with how the run ended) from one place
 * each: at the end by finish (src/pipeline/finish.ts), else by `close`.
 */
import type { BreError } from '@bre-batch/core/errors';
import { networkSecrets } from '../http/network.js';
import type { LimiterStats } from '../limits/limiter.js';
import type { Log } from '../log/logger.js';
import { Redactor } from '../output/redact.js';
import type { ServiceName } from '@bre-batch/core/types';
import { Disposer } from './disposal.js';
import { acquireRun, type RunEnd, type RunHooks, type RunParts } from './run-open.js';
import type { RunSettings } from './settings.js';

export type { RunHooks } from './run-open.js';

/** The parts, readable on the run as `Run.open` made them (declared once, in RunParts). */
export interface Run extends Omit<RunParts, 'disposer'> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the parts the constructor assigns, once.
export class Run {
  readonly #disposer: Disposer<RunEnd>;

  private constructor({ disposer, ...parts }: RunParts) {
    Object.assign(this, parts);
    this.#disposer = disposer;
  }

  /** Why the run stopped early; undefined while it goes on. */
  get stopped(): BreError | undefined {
    return this.stop.reason;
  }

  /** Limiter figures, taken when the services are let go of (empty before). */
  get limiterStats(): Partial<Record<ServiceName, LimiterStats>> {
    return this.egress.limiterStats();
  }

  /**
   * The time series' last sample and the session's end, and the final metrics, once (the close after it does
   * nothing more). Throws DISK_FULL when their disk is full.
   */
  finishMonitor(end: RunEnd): Promise<void> {
    return this.monitor.finish(end);
  }

  /**
   * Gives back everything still held, in reverse order of its acquisition, once (./disposal.ts). `failing`: the
   * caller throws a failure of its own, and the closing's are logged.
   */
  close(end: RunEnd, failing = false): Promise<void> {
    return this.#disposer.close(end, failing);
  }

  /**
   * Reads the first rows, then opens the output folder (taking its lock), the limiters and the client, and
   * starts listening for signals. The first rows are read before anything is written: an input whose header
   * cannot be read, or lacks a column the pipeline needs (the header check, ./input.ts), is a usage error
   * (exit 2, nothing called), not a stopped run, and leaves no manifest that would then refuse the corrected
   * input under the same --out. Whatever step fails, what was acquired before it is given back.
   */
  static async open(settings: RunSettings, hooks: RunHooks = {}): Promise<Run> {
    const started = Date.now();
    // One redactor for the command: the caller's, whose log scrubs with it already, else the run's own.
    const redactor = hooks.redactor ?? new Redactor();
    redactor.add(settings.authToken);
    for (const secret of networkSecrets(settings.network)) redactor.add(secret);
    const log: Log = (line, fields) => settings.log(redactor.scrub(line), fields);
    // A failure met while giving back, after another one (the run's, or an earlier step's): logged, as the
    // first failure is the one the run ends with.
    const disposer = new Disposer<RunEnd>((err, step) =>
      log(`warning: while closing the run (${step}): ${(err as Error)?.message ?? String(err)}`, { level: 'warn' }),
    );
    try {
      return new Run(await acquireRun({ settings, hooks, started, redactor, log, disposer }));
    } catch (err) {
      // The failure that stopped the opening is the one thrown.
      await disposer.close('failed', true);
      throw err;
    }
  }
}
