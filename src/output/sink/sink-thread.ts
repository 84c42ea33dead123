/**
 * A run's sink on a thread of its own (./sink-worker.ts runs the follower and its writer there; why:
 * docs/decisions/work-off-the-run-thread.md). The run's side only asks how far the sink has written (memory
 * shared with the thread, stored after each batch) and is told when it fails. `bre-batch load` has no rows to
 * keep moving: it runs the follower on the process's main thread (./load.ts).
 */
import { WorkerThread } from '../worker-thread.js';
import { Backpressure } from '../backpressure.js';
import { internalError, isBreError, type BreError } from '@bre-batch/core/errors';
import type { FollowerStats } from './follower.js';
import type { SinkShape, SinkTarget } from './writer.js';
import type { FenceOutcome, HeldChunk } from '../../job/fence.js';

export interface SinkWorkerData {
  readonly dir: string;
  readonly target: SinkTarget;
  readonly shape: SinkShape;
  /** Two BigInt64: where results.ndjson and errors.ndjson have been written up to, stored by the thread. */
  readonly positions: SharedArrayBuffer;
  /** A job's worker (`run --job`): each batch passes the job's fence (src/job/fence.ts). */
  readonly job?: {
    readonly name: string;
    readonly worker: string;
    readonly schema?: string;
    /** The worker's lease: its batches' transactions may idle no longer (src/job/fence.ts). */
    readonly leaseMs?: number;
  };
}

export type ToSinkThread =
  | { readonly type: 'finish' }
  | { readonly type: 'stop' }
  | { readonly type: 'hold'; readonly chunk: HeldChunk }
  | { readonly type: 'drop'; readonly chunk: number };
export type FromSinkThread =
  | { readonly type: 'log'; readonly line: string }
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly stats: FollowerStats; readonly reconnects: number }
  | { readonly type: 'done'; readonly stats: FollowerStats; readonly reconnects: number }
  | { readonly type: 'stopped' }
  | { readonly type: 'job'; readonly outcome: FenceOutcome };

const WHERE = "in the sink's thread";

/** The sink's failure: its own BreErrors as they are, anything else is a bug (INTERNAL). */
export function sinkFailure(err: unknown): BreError {
  return isBreError(err) ? err : internalError(err, WHERE);
}

/** What the run is told while the thread writes. */
export interface SinkThreadEvents {
  /** Told once when writing failed for good (SINK_UNAVAILABLE, SINK_REJECTED, INTERNAL for a crash) while the run goes. */
  readonly onFailure?: (err: BreError) => void;
  /** A job's worker: told after each batch what it did to the chunks (lost, done). */
  readonly onJob?: (outcome: FenceOutcome) => void;
}

export class SinkThread {
  readonly #thread: WorkerThread<ToSinkThread, FromSinkThread>;
  readonly #positions: BigInt64Array;
  readonly #behind = new Backpressure();
  #stats: FollowerStats = { results: 0, errors: 0, batches: 0, columns: [] };
  #reconnects = 0;
  #failure: BreError | undefined;
  #ended = false;

  private constructor(data: SinkWorkerData, log: (line: string) => void, events: SinkThreadEvents) {
    this.#positions = new BigInt64Array(data.positions);
    // It never keeps the process alive by itself: the run waits for it only at its end (finish).
    this.#thread = new WorkerThread<ToSinkThread, FromSinkThread>('sink', data, {
      where: WHERE,
      background: true,
      onMessage: (m) => {
        if (m.type === 'log') log(m.line);
        else if (m.type === 'job') events.onJob?.(m.outcome);
        else if (m.type === 'progress' || m.type === 'done') {
          this.#stats = m.stats;
          this.#reconnects = m.reconnects;
          this.#behind.wake();
        }
      },
      onFailure: (err) => {
        this.#failed(err);
        events.onFailure?.(this.#failure!);
      },
    });
  }

  /** Starts the thread; settles once it has read where the folder was written up to (or failed to). */
  static async open(
    dir: string,
    target: SinkTarget,
    shape: SinkShape,
    log: (line: string) => void,
    job?: SinkWorkerData['job'],
    events: SinkThreadEvents = {},
  ): Promise<SinkThread> {
    const t = new SinkThread(
      { dir, target, shape, positions: new SharedArrayBuffer(16), ...(job ? { job } : {}) },
      log,
      events,
    );
    try {
      await t.#thread.next((m) => m.type === 'ready');
    } catch (err) {
      await t.#thread.end();
      throw sinkFailure(err);
    }
    return t;
  }

  get stats(): FollowerStats {
    return this.#stats;
  }

  /** Connections the thread's writer opened again after a loss. */
  get reconnects(): number {
    return this.#reconnects;
  }

  get failure(): BreError | undefined {
    return this.#failure;
  }

  /** undefined while the sink keeps up, else a promise that settles once it has caught up enough (../backpressure.ts). */
  room(ends: { results: number; errors: number }): Promise<void> | undefined {
    return this.#behind.room(
      () =>
        ends.results -
        Number(Atomics.load(this.#positions, 0)) +
        (ends.errors - Number(Atomics.load(this.#positions, 1))),
    );
  }

  /** A job's chunk claimed: its rows may be written under its token (before any of its rows is journalled). */
  hold(chunk: HeldChunk): void {
    if (!this.#ended) this.#thread.send({ type: 'hold', chunk });
  }

  /** A job's chunk lost: its rows are refused from now on. */
  drop(chunk: number): void {
    if (!this.#ended) this.#thread.send({ type: 'drop', chunk });
  }

  /** The journals are closed: the thread writes what is left and ends. Throws the failure that stopped the sink. */
  async finish(): Promise<FollowerStats> {
    if (this.#failure) {
      await this.#end();
      throw this.#failure;
    }
    this.#thread.send({ type: 'finish' });
    try {
      await this.#thread.next((x) => x.type === 'done');
    } catch (err) {
      this.#failed(err);
      throw this.#failure;
    } finally {
      await this.#end();
    }
    return this.#stats;
  }

  /** Stops without writing what is left (the run failed otherwise; the next session catches up). */
  async stop(): Promise<void> {
    if (this.#ended) return;
    this.#thread.send({ type: 'stop' });
    await this.#thread.next((x) => x.type === 'stopped').catch((err: unknown) => this.#failed(err));
    await this.#end();
  }

  #failed(err: unknown): void {
    this.#failure ??= sinkFailure(err);
    this.#behind.lift();
  }

  async #end(): Promise<void> {
    this.#ended = true;
    this.#behind.lift();
    await this.#thread.end();
  }
}
