/**
 * One worker in a job, on the run's thread: it claims a chunk when its run has room (the run pulls the next
 * rows only when its window of rows in flight has room, and its own limiter sets that pace), hands the run the
 * chunk's rows not yet committed, renews its leases at a heartbeat, and hands its chunks back at their
 * committed position when it stops. This is the run's input, not a second runner: `rows()` is the generator
 * the one row loop (src/pipeline/feed.ts) reads from.
 *
 * Commits are not made here: the sink's follower commits each chunk's rows and position in one transaction,
 * behind the fence (./fence.ts). This side hears from it which chunks were lost or are done.
 *
 * Before each attempt of a row's call (the limiter has let it go: the last moment before the request), the
 * client asks `sendable` whether the row's claim still stands: a worker stalled past its lease (SIGSTOP, a long
 * pause) must not send what it had queued of a chunk another worker took meanwhile
 * (docs/decisions/job-lost-chunk-not-sent.md).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { BreError, isBreError } from '@bre-batch/core/errors';
import type { InputRow } from '@bre-batch/core/types';
import { bitsOf, emptyBits, hasBit } from './bits.js';
import type { FenceOutcome, HeldChunk } from './fence.js';
import type { ClaimedChunk, JobStore } from './store.js';
import { RateWindow } from './rate-window.js';
import { Nap } from '../retry/sleep.js';

/**
 * Defaults: a lease of 60 s renewed every 10 s. A worker is taken for dead after 60 s without a renewal (six
 * missed heartbeats: a database failover or a long GC pause does not lose a chunk), and its chunk is taken over
 * about a minute after a kill. Correctness does not depend on these (a lapsed holder's writes are refused by
 * the token, however long it stalls): they only set how soon work moves and how much is sent again.
 */
/** Rows handed to the run at a time: the dispatch mark reported at the heartbeat stays within this of the truth. */
const SLICE_ROWS = 64;

/** A worker's name in the job's tables: host, process and a random part (two processes never share one). */
export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The sink's side a member tells about its chunks (src/output/sink/sink-thread.ts). */
export interface ChunkListener {
  hold(c: HeldChunk): void;
  drop(chunk: number): void;
}

export interface JobMemberOptions {
  readonly store: JobStore;
  readonly name: string;
  readonly worker: string;
  readonly address: string | null;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** How often a worker with nothing to claim looks again for a chunk whose lease lapsed (default: the heartbeat). */
  readonly pollMs?: number;
  /** The clock a lease is timed on here, ms, monotonic (default performance.now; a test's own). */
  readonly leaseClock?: () => number;
  /** Rows this worker's run has done (a line in results or errors), for its rate. */
  readonly rowsDone: () => number;
  /** The clock the rate is measured on, ms (default Date.now; a test's own). */
  readonly now?: () => number;
  readonly log: (line: string) => void;
  /** The job's database went away for good (SINK_UNAVAILABLE): the run stops, resumable. */
  readonly fail: (err: BreError) => void;
}

interface Held {
  readonly claim: ClaimedChunk;
  readonly bits: Buffer;
  sentTo: number;
  /** Rows sent again not yet reported. */
  resent: number;
  lost: boolean;
  /**
   * When the claim or the last renewal that held was asked for, on the lease clock: the database's lease runs from
   * a later moment (its own clock, when the statement ran), so this side's end of it is never later than the real one.
   */
  renewedAt: number;
}

export interface MemberStats {
  claimed: number;
  takeovers: number;
  resent: number;
  lost: number;
  done: number;
}

export class JobMember {
  readonly stats: MemberStats = { claimed: 0, takeovers: 0, resent: 0, lost: 0, done: 0 };
  readonly #held = new Map<number, Held>();
  /** The claim each row handed to the run came under (a chunk claimed anew hands the same row numbers out again). */
  readonly #claimOf = new WeakMap<InputRow, Held>();
  /**
   * Chunks that finished with rows sent again not yet reported: the next heartbeat reports them (what a heartbeat
   * under way reports is taken off first, as for the chunks held).
   */
  readonly #doneResent: Held[] = [];
  #listener: ChunkListener | undefined;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #stopped = false;
  readonly #nap = new Nap();
  readonly #rate = new RateWindow();
  #now(): number {
    return (this.opts.now ?? Date.now)();
  }
  #leaseNow(): number {
    return this.opts.leaseClock ? this.opts.leaseClock() : performance.now();
  }

  constructor(readonly opts: JobMemberOptions) {}

  /** Where the chunks' claims and losses are told (the sink's thread); set before the first rows are read. */
  attach(listener: ChunkListener): void {
    this.#listener = listener;
  }

  /** Starts the heartbeat (the worker's row appears at once). */
  async start(): Promise<void> {
    await this.#beat();
    this.#timer = setInterval(() => void this.#beat(), this.opts.heartbeatMs);
    this.#timer.unref();
  }

  /** No more claims (a stop): the generator ends at its next step. */
  stop(): void {
    this.#stopped = true;
    this.#nap.wake();
  }

  /** What a sink batch did to the chunks (from the fence, after its transaction committed). */
  outcome(o: FenceOutcome): void {
    for (const c of o.done) {
      const h = this.#held.get(c);
      if (!h) continue;
      this.#doneResent.push(h);
      this.#held.delete(c);
      this.stats.done += 1;
    }
    for (const c of o.lost) this.#lose(c, 'its rows were refused at commit');
    if (o.jobDone) this.opts.log(`job ${this.opts.name}: its last chunk is committed: the job is done`);
  }

  /**
   * The rows of the chunks this worker claims, a slice at a time, those already committed skipped. Claims the
   * next chunk when the run asks for more rows; with none to claim, waits while other workers hold chunks
   * (their lease may lapse), and ends once every chunk is done or is this worker's own.
   */
  async *rows(read: (c: ClaimedChunk) => AsyncIterable<InputRow[]>): AsyncGenerator<InputRow[]> {
    const { store, name, worker, leaseMs } = this.opts;
    while (!this.#stopped) {
      const asked = this.#leaseNow();
      const c = await store.claim(name, worker, leaseMs);
      if (!c) {
        if ((await store.unfinished(name, worker)) === 0) return;
        await this.#nap.take(this.opts.pollMs ?? this.opts.heartbeatMs);
        continue;
      }
      const h: Held = {
        claim: c,
        bits: c.committed ? bitsOf(c.committed, c.rows) : emptyBits(c.rows),
        sentTo: 0,
        resent: 0,
        lost: false,
        renewedAt: asked,
      };
      this.#held.set(c.chunk, h);
      this.stats.claimed += 1;
      this.#listener?.hold({ chunk: c.chunk, token: c.token, firstRow: c.firstRow, rows: c.rows });
      if (c.takeover) {
        this.stats.takeovers += 1;
        this.opts.log(
          `job ${name}: took over chunk ${c.chunk} (rows ${c.firstRow}-${c.firstRow + c.rows - 1}) after its holder's lease lapsed`,
        );
      }
      for await (const batch of read(c)) {
        if (h.lost || this.#stopped) break;
        const out: InputRow[] = [];
        for (const row of batch) {
          const i = row.row - c.firstRow;
          if (i < 0 || i >= c.rows || hasBit(h.bits, i)) continue;
          out.push(row);
        }
        for (let k = 0; k < out.length && !h.lost && !this.#stopped; k += SLICE_ROWS) {
          const slice = out.slice(k, k + SLICE_ROWS);
          for (const row of slice) {
            const i = row.row - c.firstRow;
            // Its earlier holder had handed this row to its run: it may have been sent already.
            if (i < c.prevSent) {
              h.resent += 1;
              this.stats.resent += 1;
            }
            h.sentTo = i + 1;
            this.#claimOf.set(row, h);
          }
          this.#rate.start(this.#now(), this.opts.rowsDone());
          yield slice;
        }
      }
    }
  }

  /**
   * Whether a row this worker handed to its run may be sent now (asked before each attempt, once the limiter let
   * it go). Yes while its claim's lease, as last renewed, runs for more than a heartbeat yet by this worker's
   * clock (no promise: the common case). No once the chunk is known lost: another worker holds it and sends its
   * rows. Past that margin (the worker was stalled, or its renewals are slow), the database decides: a heartbeat
   * renews the lease if the chunk is still this worker's, or says it was taken.
   */
  sendable(row: InputRow): boolean | Promise<boolean> {
    const h = this.#claimOf.get(row);
    if (h && !h.lost && !this.#lapsing(h)) return true;
    return this.#verdict(h);
  }

  async #verdict(h: Held | undefined): Promise<boolean> {
    if (!h || h.lost) return false;
    // A heartbeat that was under way before a stall renews from before it: another one is asked for.
    while (this.#held.get(h.claim.chunk) === h && !this.#stopped && this.#lapsing(h)) await this.#beat();
    // Still its own and renewed. Not: lost, or the run is stopping (the row is left to the next session).
    return !h.lost && this.#held.get(h.claim.chunk) === h && !this.#lapsing(h);
  }

  /**
   * The lease runs out within a heartbeat by this worker's clock (a third of the lease at most, as --job-heartbeat
   * is): the margin a late renewal, or a request written a moment after the question, needs.
   */
  #lapsing(h: Held): boolean {
    const margin = Math.min(this.opts.heartbeatMs, this.opts.leaseMs / 3);
    return this.#leaseNow() >= h.renewedAt + this.opts.leaseMs - margin;
  }

  /** Stops the heartbeat and hands back the chunks still held, at their committed position; leaves the job. */
  async close(stopped: boolean): Promise<void> {
    this.stop();
    clearInterval(this.#timer);
    await this.#beating?.catch(() => undefined);
    const { store, name, worker } = this.opts;
    try {
      // A last report first: the rows sent again and the dispatch marks count for whoever takes the chunks.
      await this.#beat();
      const held = [...this.#held.values()]
        .filter((h) => !h.lost)
        .map((h) => ({ chunk: h.claim.chunk, token: h.claim.token }));
      await store.release(name, worker, held);
      if (held.length > 0)
        this.opts.log(
          `job ${name}: handed back ${held.length} chunk${held.length > 1 ? 's' : ''} at ${held.length > 1 ? 'their' : 'its'} committed position`,
        );
      await store.leave(name, worker, stopped ? 'stopped' : 'finished');
    } catch (err) {
      // Unreachable now: the leases lapse by themselves and the chunks are taken over.
      this.opts.log(
        `job ${name}: could not hand back its chunks (${(err as Error).message}): they go back to the job when their lease lapses`,
      );
    } finally {
      await store.close();
    }
  }

  /**
   * The chunk as it was held under `claim.token` is lost. Told late (a heartbeat or a batch that was under way),
   * it may be this worker's again under a newer token (its own lease lapsed and it claimed the chunk anew): that
   * claim stands.
   */
  #lose(claim: { readonly chunk: number; readonly token: string }, why: string): void {
    const { chunk } = claim;
    const h = this.#held.get(chunk);
    if (!h || h.lost || h.claim.token !== claim.token) return;
    h.lost = true;
    this.#held.delete(chunk);
    this.stats.lost += 1;
    this.#listener?.drop(chunk);
    this.opts.log(
      `job ${this.opts.name}: lost chunk ${chunk} (${why}): another worker holds it now; its rows here are not written`,
    );
  }

  #beat(): Promise<void> {
    if (this.#beating) return this.#beating;
    this.#beating = (async () => {
      const asked = this.#leaseNow();
      const done = this.opts.rowsDone();
      const rate = this.#rate.rate(this.#now(), done);
      const held = [...this.#held.values()];
      const report = held.map((h) => ({
        chunk: h.claim.chunk,
        token: h.claim.token,
        sentTo: h.sentTo,
        resent: h.resent,
      }));
      const doneResent = this.#doneResent
        .splice(0)
        .filter((h) => h.resent > 0)
        .map((h) => ({ chunk: h.claim.chunk, resent: h.resent }));
      try {
        const { lost, done: finished } = await this.opts.store.heartbeat(
          this.opts.name,
          {
            worker: this.opts.worker,
            host: hostname(),
            address: this.opts.address,
            rowsDone: done,
            rate,
          },
          report,
          this.opts.leaseMs,
          doneResent,
        );
        for (const h of held) h.resent -= report.find((r) => r.chunk === h.claim.chunk)!.resent;
        for (const c of finished) if (this.#held.delete(c)) this.stats.done += 1;
        // By the token reported: a chunk claimed again while the heartbeat was under way is not the one lost.
        for (const c of lost)
          this.#lose({ chunk: c, token: report.find((r) => r.chunk === c)!.token }, 'its lease lapsed');
        // Renewed: the chunks reported that are still held under the token reported.
        for (const h of held) if (this.#held.get(h.claim.chunk) === h) h.renewedAt = Math.max(h.renewedAt, asked);
      } catch (err) {
        this.stop();
        this.opts.fail(
          isBreError(err)
            ? err
            : new BreError('SINK_UNAVAILABLE', `the job's database failed: ${(err as Error).message}`, { cause: err }),
        );
      }
    })().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }
}
