/**
 * The run's side of the spool (./spool.ts), which runs in a worker thread (./spool-worker.ts): the run
 * stores how far results.ndjson has grown after each write in memory shared with the thread (a message per
 * write cost a tenth of the run's CPU), the thread looks every POLL_MS, and at the end the run waits for
 * what it holds. Spooling on the run's thread cost about a fifth of the CPU of a row
 * with --rate off and stalled the event loop for as long as a Parquet row group took to encode (README,
 * Performance); on its own thread it uses the core the run leaves idle.
 *
 * A spool that fails (a full disk, a crash of the thread) does not stop the run: the journal stays the truth,
 * and the end reads it instead (assembleResultFiles without a spool).
 */
import type { ResourceLimits } from 'node:worker_threads';
import { WorkerThread } from '../worker-thread.js';
import { internalError, isBreError, type BreError } from '@bre-batch/core/errors';
import type { ColumnChange, ColumnUnion } from '../journal/columns.js';
import type { SpoolContents, SpoolOptions } from './spool.js';

/** What the thread starts with: the spool's options, the union as plain data. */
export interface SpoolWorkerData extends Omit<SpoolOptions, 'union' | 'recorder' | 'tally'> {
  /**
   * A column union holding at least every column of the journal before `start` (more is fine: the end uses
   * a segment only if its columns are the final ones).
   */
  readonly union: readonly ColumnChange[];
  readonly resultsPath: string;
  /** Where this session's lines start in results.ndjson. */
  readonly start: number;
  /** One BigInt64: the length of results.ndjson so far, stored by the run after each write. */
  readonly end: SharedArrayBuffer;
  /** The run's decision stages: each chunk's record counts its rows (./records.ts). */
  readonly decisions?: readonly { readonly id: string; readonly kind: string }[];
}

/** How often the thread looks at the length the run stored. */
export const POLL_MS = 20;

export type ToSpool = { readonly type: 'finish'; readonly size: number };
/** Its failure (the thread's port) is DISK_FULL, OUTPUT_UNWRITABLE, or INTERNAL for a bug. */
export type FromSpool = { readonly type: 'done'; readonly contents: SpoolContents };

/**
 * The heap of the spool's thread. The thread keeps little (the reorder buffer, one row group: a few MB) but
 * makes kilobytes of garbage a row (the parsed line, its values and CSV record, the Parquet encoding), and what
 * the reorder buffer and the row group hold lives long enough to reach the old generation. V8 lets the old
 * generation grow to a factor times what was alive at the last full collection before it collects again, and
 * that factor is up to 4 when the heap's limit is 2 GB or more (the process's default: a quarter of the
 * memory, up to 4 GB), 1.3 to 2 below: with the default the thread's heap went on growing well into a long
 * run, with garbage, not rows (docs/performance.md, The spool's heap). 1 GB keeps the factor near 1.6 and is
 * still far above what the thread keeps; a thread that runs out all the same ends the spool, and the end
 * reads the journal instead (as for any failure of the spool).
 */
export const SPOOL_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 1024 };

const WHERE = "in the spool's thread";

export class SpoolThread {
  readonly #thread: WorkerThread<ToSpool, FromSpool>;
  readonly #end: BigInt64Array;
  #failure: string | undefined;
  #ended = false;

  constructor(o: Omit<SpoolWorkerData, 'union' | 'end'> & { readonly union: ColumnUnion }) {
    const end = new SharedArrayBuffer(8);
    this.#end = new BigInt64Array(end);
    Atomics.store(this.#end, 0, BigInt(o.start));
    // It never keeps the process alive by itself: the run waits for it only at the end (finish).
    this.#thread = new WorkerThread<ToSpool, FromSpool>(
      'spool',
      { ...o, union: [...o.union.entries()], end } satisfies SpoolWorkerData,
      {
        where: WHERE,
        resourceLimits: SPOOL_RESOURCE_LIMITS,
        background: true,
        onFailure: (err) => {
          const e = isBreError(err) ? err : internalError(err, WHERE);
          this.#failure = e.message;
          this.onFailure?.(e);
        },
      },
    );
  }

  /**
   * Told when the spool gives up while the run goes (not after `finish` or `stop`): the run decides whether
   * that stops it (DISK_FULL does).
   */
  onFailure: ((err: BreError) => void) | undefined;

  /** Why the spool gave up (undefined while it works). */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** results.ndjson now ends at byte `end`, after a whole line. */
  notify(end: number): void {
    Atomics.store(this.#end, 0, BigInt(end));
  }

  /**
   * results.ndjson is closed at `size` bytes: what the spool holds once it has read every line, or undefined
   * when it failed (the caller reads the journal instead). The thread ends.
   */
  async finish(size: number): Promise<SpoolContents | undefined> {
    if (this.#ended) return undefined;
    this.#ended = true;
    this.#thread.send({ type: 'finish', size });
    try {
      return (await this.#thread.next((m) => m.type === 'done')).contents;
    } catch (err) {
      this.#failure ??= (err as Error).message;
      return undefined;
    } finally {
      await this.#thread.end();
    }
  }

  /** Ends the thread without waiting for it (a run that failed; the next session removes its files). */
  stop(): void {
    this.#ended = true;
    void this.#thread.end();
  }
}
