/**
 * The run's side of the spool (./spool.ts), which runs in a worker thread (./spool-worker.ts): the run stores how
 * far results.ndjson has grown after each write in memory shared with the thread, the thread looks every
 * POLL_MS, and at the end the run waits for what it holds (why on a thread, and why shared memory:
 * docs/decisions/work-off-the-run-thread.md). A spool that fails (a full disk, a crash of the thread) does not
 * stop the run: the journal stays the truth, and the end reads it instead (assembleResultFiles without a spool).
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
  /**
   * Two BigInt64s stored by the run after each write: the length of results.ndjson so far, then the run's row
   * floor (src/pipeline/row-floor.ts; 0: none), whose rows below it all have their lines before that length.
   */
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
 * The heap of the spool's thread: 1 GB keeps V8's growth factor near 1.6 (up to 4 from a 2 GB limit, the
 * process's default) and is far above what the thread keeps (docs/decisions/work-off-the-run-thread.md; a thread
 * that runs out all the same ends the spool, and the end reads the journal instead).
 */
export const SPOOL_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 1024 };

const WHERE = "in the spool's thread";

export class SpoolThread {
  readonly #thread: WorkerThread<ToSpool, FromSpool>;
  readonly #end: BigInt64Array;
  #failure: string | undefined;
  #ended = false;

  constructor(o: Omit<SpoolWorkerData, 'union' | 'end'> & { readonly union: ColumnUnion }) {
    const end = new SharedArrayBuffer(16);
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

  /**
   * results.ndjson now ends at byte `end`, after a whole line, and every row below `floor` has its line before
   * it. The length is stored first: the thread reads the floor first, so it never sees a floor with an older
   * length.
   */
  notify(end: number, floor = 0): void {
    Atomics.store(this.#end, 0, BigInt(end));
    Atomics.store(this.#end, 1, BigInt(floor));
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
