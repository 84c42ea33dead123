/**
 * A run's sink on a thread of its own (./worker.ts runs the follower and its writer there): reading the
 * journals back, parsing them and encoding the rows for the database cost the run's thread a tenth to a fifth
 * of its CPU with --rate off, and a batch held its event loop for tens of milliseconds; on its own thread they
 * use what the run leaves idle (as the spool does, ../spool/thread.ts). The run's side only asks how far the
 * sink has written (memory shared with the thread, stored after each batch) and is told when it fails.
 *
 * `bre-batch load` has no rows to keep moving: it runs the follower on the process's main thread (./load.ts).
 */
import type { Worker } from 'node:worker_threads';
import { startScriptWorker, workerScript } from '../worker-thread.js';
import { BreError, internalError, isBreError, type BreErrorJSON } from '../../errors.js';
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
  readonly job?: { readonly name: string; readonly worker: string; readonly schema?: string };
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
  | { readonly type: 'job'; readonly outcome: FenceOutcome }
  | { readonly type: 'failed'; readonly error: BreErrorJSON };

/** A failure as the thread sends it: the sink's own BreErrors as they are, anything else is a bug (INTERNAL). */
export function sendError(err: unknown): BreErrorJSON {
  return (isBreError(err) ? err : internalError(err, "in the sink's thread")).toJSON();
}

function startWorker(workerData: SinkWorkerData): Worker {
  return startScriptWorker(workerScript('sink'), workerData);
}

/** What the run is told while the thread writes. */
export interface SinkThreadEvents {
  /** Told once when writing failed for good (SINK_UNAVAILABLE, SINK_REJECTED, INTERNAL for a crash) while the run goes. */
  readonly onFailure?: (err: BreError) => void;
  /** A job's worker: told after each batch what it did to the chunks (lost, done). */
  readonly onJob?: (outcome: FenceOutcome) => void;
}

/** Journal bytes behind which the run waits, and under which it goes on again (as ./follower.ts room()). */
const HIGH = 64 * 1024 * 1024;
const LOW = 32 * 1024 * 1024;

export class SinkThread {
  readonly #worker: Worker;
  readonly #positions: BigInt64Array;
  readonly #log: (line: string) => void;
  #stats: FollowerStats = { results: 0, errors: 0, batches: 0, columns: [] };
  #reconnects = 0;
  #failure: BreError | undefined;
  #ended = false;
  #roomWaiters: (() => void)[] = [];
  #settle: ((m: FromSinkThread) => void) | undefined;
  readonly #exited: Promise<void>;
  readonly #events: SinkThreadEvents;

  private constructor(data: SinkWorkerData, log: (line: string) => void, events: SinkThreadEvents) {
    this.#positions = new BigInt64Array(data.positions);
    this.#log = log;
    this.#events = events;
    this.#worker = startWorker(data);
    // It never keeps the process alive by itself: the run waits for it only at its end (finish).
    this.#worker.unref();
    this.#worker.on('message', (m: FromSinkThread) => this.#receive(m));
    this.#worker.on('error', (err) => this.#receive({ type: 'failed', error: sendError(err) }));
    this.#exited = new Promise((resolve) =>
      this.#worker.once('exit', (code) => {
        this.#receive({
          type: 'failed',
          error: sendError(new Error(`the thread ended (exit code ${code}) before it was done`)),
        });
        resolve();
      }),
    );
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
    const first = await t.#next((m) => m.type === 'ready' || m.type === 'failed');
    if (first.type === 'failed') {
      await t.#worker.terminate();
      throw BreError.fromJSON(first.error);
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

  /** As SinkFollower.room: undefined while the sink keeps up, else a promise that settles once it has caught up enough. */
  room(ends: { results: number; errors: number }): Promise<void> | undefined {
    if (this.#failure || this.#ended || this.#lag(ends) < HIGH) return undefined;
    return new Promise((resolve) => {
      const check = () => {
        if (this.#failure || this.#ended || this.#lag(ends) < LOW) resolve();
        else this.#roomWaiters.push(check);
      };
      this.#roomWaiters.push(check);
    });
  }

  /** A job's chunk claimed: its rows may be written under its token (before any of its rows is journalled). */
  hold(chunk: HeldChunk): void {
    if (!this.#ended) this.#worker.postMessage({ type: 'hold', chunk } satisfies ToSinkThread);
  }

  /** A job's chunk lost: its rows are refused from now on. */
  drop(chunk: number): void {
    if (!this.#ended) this.#worker.postMessage({ type: 'drop', chunk } satisfies ToSinkThread);
  }

  /** The journals are closed: the thread writes what is left and ends. Throws the failure that stopped the sink. */
  async finish(): Promise<FollowerStats> {
    if (this.#failure) {
      await this.#end();
      throw this.#failure;
    }
    this.#worker.ref();
    this.#worker.postMessage({ type: 'finish' } satisfies ToSinkThread);
    const m = await this.#next((x) => x.type === 'done' || x.type === 'failed');
    await this.#end();
    if (m.type === 'failed') throw BreError.fromJSON(m.error);
    return this.#stats;
  }

  /** Stops without writing what is left (the run failed otherwise; the next session catches up). */
  async stop(): Promise<void> {
    if (this.#ended) return;
    this.#worker.ref();
    this.#worker.postMessage({ type: 'stop' } satisfies ToSinkThread);
    await this.#next((x) => x.type === 'stopped' || x.type === 'failed');
    await this.#end();
  }

  #lag(ends: { results: number; errors: number }): number {
    return (
      ends.results - Number(Atomics.load(this.#positions, 0)) + (ends.errors - Number(Atomics.load(this.#positions, 1)))
    );
  }

  async #end(): Promise<void> {
    this.#ended = true;
    for (const w of this.#roomWaiters.splice(0)) w();
    await this.#worker.terminate();
    await this.#exited;
  }

  /** The next message that `accept`s. */
  #next(accept: (m: FromSinkThread) => boolean): Promise<FromSinkThread> {
    return new Promise((resolve) => {
      this.#settle = (m) => {
        if (!accept(m)) return;
        this.#settle = undefined;
        resolve(m);
      };
    });
  }

  #receive(m: FromSinkThread): void {
    switch (m.type) {
      case 'log':
        this.#log(m.line);
        return;
      case 'job':
        this.#events.onJob?.(m.outcome);
        return;
      case 'progress':
      case 'done':
        this.#stats = m.stats;
        this.#reconnects = m.reconnects;
        for (const w of this.#roomWaiters.splice(0)) w();
        break;
      case 'failed':
        if (!this.#failure && !this.#ended) {
          this.#failure = BreError.fromJSON(m.error);
          for (const w of this.#roomWaiters.splice(0)) w();
          if (this.#settle === undefined) this.#events.onFailure?.(this.#failure);
        }
        break;
      default:
        break;
    }
    this.#settle?.(m);
  }
}
