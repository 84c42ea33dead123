/**
 * `--redis URL`: each service's limiter is Bottleneck's clustered limiter on Redis, so every process that uses
 * the same Redis and the same client id shares one budget per service: N workers behind one egress IP (one
 * NAT address on the provider's allow-list) together stay under that address's limit (decision spec
 * section 8: limits are per IP). Bottleneck's `register` script reserves the next start slot atomically, so
 * starts are spaced across all workers; `maxConcurrent` caps calls in flight over all of them.
 *
 * The limiter id, who writes the shared rate, job expiration, the account service's fixed budget, spacing and
 * Redis going away mid-run are decided in docs/decisions/redis-limiter.md; the id and the spacing are
 * `limiterId` and `clusterMinTime` below.
 */
import { createHash } from 'node:crypto';
import Bottleneck from 'bottleneck';
import { BreError } from '@bre-batch/core/errors';
import { retrying } from '../retry/policy.js';
import type { ServiceName } from '@bre-batch/core/types';
import { localLimiter, type LimiterFactory, type LimiterRequest } from './factory.js';
import type { LimiterStats, ServiceLimiter } from './limiter.js';
import { describeRate, type Rate } from '@bre-batch/core/rates';
import { Throttle } from './throttle.js';
import { openRedis, redactRedisUrl, type RepairedIORedisConnection } from './redis-connection.js';

/** Redis arbitrates on reservations, not on when a request is written (see the slack above). */
const NOT_TRACKED = (): void => {};

/** Spacing margin in cluster mode (locally a few ms a window, ../limits/pacer.ts): start jitter across processes adds to the spread. */
export const REDIS_MARGIN = 0.03;

/**
 * Start jitter allowed for, in ms. A slot is reserved in Redis, then the worker waits for it and sends: a
 * worker whose event loop is busy (starting up, opening its first connections, GC) sends late, and a strict
 * sliding window on the server then sees the late call and the on-time call `limit` slots later closer than
 * the window. Spacing by (window + jitter) / limit absorbs a late start of up to `jitter`. At the documented
 * 60 s windows the 3% margin already allows 1.8 s; this matters only for short windows (tests, 1 s limits).
 */
const REDIS_JITTER_MS = 50;

/** Whole ms between starts across all workers: see REDIS_MARGIN, REDIS_JITTER_MS and the PEXPIRE note below. */
export function clusterMinTime(rate: Rate, margin = REDIS_MARGIN): number {
  return Math.ceil(Math.max(rate.windowMs * (1 + margin), rate.windowMs + REDIS_JITTER_MS) / rate.limit);
}

export interface RedisLimiterOptions {
  /** Suffix of the limiter ids (default: env BRE_LIMITER_ID_SUFFIX; none when unset). */
  readonly idSuffix?: string;
  /** Spacing margin (default REDIS_MARGIN). */
  readonly margin?: number;
  /** How long an attempt waits for Redis to come back before failing as NETWORK (default 60 s). */
  readonly outageMs?: number;
  /** Redis key lifetime after the last use (Bottleneck `timeout`; default 15 min). */
  readonly keyTtlMs?: number;
}

export function limiterId(service: ServiceName, clientId: string, suffix?: string, address?: string): string {
  const h = createHash('sha256').update(clientId).digest('hex').slice(0, 16);
  return `bre-batch:${service}:${h}${suffix ? `:${suffix}` : ''}${address ? `@${address}` : ''}`;
}

/** Longest a job may hold its slot in Redis: see the header. */
export function jobExpirationMs(timeoutMs: number, rate: Rate, concurrency: number, margin = REDIS_MARGIN): number {
  return Math.ceil(timeoutMs + concurrency * clusterMinTime(rate, margin) + 10_000);
}

/** A job whose reserved slot had passed by more than the allowed lateness: it gives the slot up unsent. */
class LateStart extends Error {}

export class RedisLimiter implements ServiceLimiter {
  readonly service: ServiceName;
  readonly id: string;
  pausedUntil = 0;
  readonly #throttle = new Throttle();
  protected readonly limiter: Bottleneck;
  readonly #minTime: number;
  readonly #perMinute: number;
  #waitMs = 0;
  #scheduled = 0;
  readonly #outageMs: number;
  readonly #onStop: () => Promise<void>;
  readonly #watchdog: NodeJS.Timeout;
  #stopped = false;
  /** Attempts re-scheduled because Redis failed. */
  rescheduled = 0;

  /** Slots given up because the job would have started too late (see the constructor). */
  lateStarts = 0;

  constructor(opts: {
    service: ServiceName;
    rate: Rate;
    concurrency: number;
    bottleneck: Bottleneck;
    id: string;
    outageMs: number;
    minTime: number;
    connection: RepairedIORedisConnection;
    onStop: () => Promise<void>;
  }) {
    this.service = opts.service;
    this.limiter = opts.bottleneck;
    this.#minTime = opts.minTime;
    this.#perMinute = (opts.rate.limit * 60_000) / opts.rate.windowMs;
    // Bottleneck emits 'error' for failures inside its own machinery (e.g. a Redis hiccup); without a
    // listener it would be thrown asynchronously and crash the process.
    this.limiter.on('error', () => undefined);
    this.id = opts.id;
    this.#outageMs = opts.outageMs;
    this.#onStop = opts.onStop;
    // Late starts. Slots are spaced minTime apart, so `limit` consecutive slots span limit x minTime, which
    // exceeds the window by `slack`. A strict sliding window on the server refuses a call when the call
    // `limit` slots earlier arrived more than `slack` late (it is then still inside the window). Calls go
    // late when a worker's event loop stalls (start-up, GC, a CPU-throttled container): its timers then
    // fire together, in a burst. So a job that finds its slot passed by more than half the slack gives it
    // up unsent and queues again for a fresh slot: every call starts within slack / 2 of its slot.
    // A worker whose loop lags for good (an overloaded machine) would then give up every slot: the allowed
    // lateness doubles, at most once a second, while slots keep being given up, and halves again, at most
    // once a second, while calls start well in time. One stall's burst raises it once, not per late job.
    const slack = opts.rate.limit * opts.minTime - opts.rate.windowMs;
    const lateLimitMs = Math.max(5, slack / 2);
    const late = { level: 0, changedAt: 0 };
    const clock = opts.connection.clock;
    const runner = this.limiter as unknown as {
      _run(index: string, job: { task: (...a: unknown[]) => unknown }, wait: number): unknown;
    };
    const run = runner._run;
    runner._run = function (this: unknown, index, job, wait) {
      const slot = opts.connection.takeSlot(index);
      if (slot !== undefined) {
        const task = job.task;
        job.task = (...args: unknown[]) => {
          const now = clock.now();
          const allowed = lateLimitMs * 2 ** late.level;
          const canChange = now - late.changedAt >= 1000;
          if (now - slot > allowed) {
            if (canChange && late.level < 10) Object.assign(late, { level: late.level + 1, changedAt: now });
            throw new LateStart(`slot passed by ${now - slot} ms`);
          }
          if (canChange && late.level > 0 && now - slot < allowed / 4)
            Object.assign(late, { level: late.level - 1, changedAt: now });
          return task(...args);
        };
      }
      return run.call(this, index, job, wait);
    };
    // A queued job is registered when a `capacity` message arrives or another job is submitted; messages
    // published while Redis was restarting are lost, and a failed registration leaves the job queued with
    // nothing to wake it. Draining again every second un-sticks it (Redis still arbitrates every slot).
    const internal = this.limiter as unknown as { queued(): number; _drainAll(): Promise<unknown> };
    this.#watchdog = setInterval(() => {
      if (internal.queued() > 0) internal._drainAll().catch(() => undefined);
    }, 1000);
    this.#watchdog.unref();
  }

  /** This worker's pause: the documented back-off for the spell, as an in-process limiter's (./throttle.ts). */
  onThrottled(retryAfterSeconds?: number): void {
    const now = Date.now();
    this.pausedUntil = Math.max(this.pausedUntil, now + this.#throttle.refused(now, now, retryAfterSeconds));
  }

  get throttledSince(): number | null {
    return this.#throttle.since;
  }

  onAnswered(): void {
    this.#throttle.answered();
  }

  onSuccess(): void {
    this.#throttle.answered();
  }

  /**
   * Estimated from this worker's own queue: the jobs queued or waiting for their reserved slot, one spacing
   * each (other workers on the same budget take slots too, which this cannot see without asking Redis).
   */
  nextStartInMs(): number {
    const c = this.limiter.counts();
    const ms = Math.max(this.pausedUntil - Date.now(), ((c.QUEUED ?? 0) + (c.RUNNING ?? 0)) * this.#minTime);
    return Math.max(ms, 0);
  }

  stats(): LimiterStats {
    return { waitMs: Math.round(this.#waitMs), scheduled: this.#scheduled, currentPerMinute: this.#perMinute };
  }

  /** One attempt through Bottleneck; a lower priority number runs first (5 is its default). */
  #enqueue<T>(fn: (sent: () => void) => Promise<T>, retry: boolean): Promise<T> {
    const queuedAt = performance.now();
    this.#scheduled += 1;
    return this.limiter.schedule({ priority: retry ? 4 : 5 }, () => {
      this.#waitMs += performance.now() - queuedAt;
      return fn(NOT_TRACKED);
    });
  }

  async schedule<T>(fn: (sent: () => void) => Promise<T>, retry = false): Promise<T> {
    // A job re-queued after a late start or a Redis failure was never sent: it keeps its place ahead.
    let ahead = retry;
    let ran = false;
    return retrying(
      {
        forMs: this.#outageMs,
        retryable: () => !ran && !this.#stopped,
        giveUp: (err, waitedMs) =>
          new BreError(
            'NETWORK',
            `the shared ${this.service} limiter on Redis has failed for ${Math.round(waitedMs / 1000)} s: ${(err as Error).message}`,
            { service: this.service, cause: err },
          ),
        onRetry: () => {
          this.rescheduled += 1;
        },
      },
      async () => {
        for (;;) {
          try {
            return await this.#enqueue((sent) => {
              ran = true;
              return fn(sent);
            }, ahead);
          } catch (err) {
            if (ran || this.#stopped) throw err;
            ahead = true;
            // A slot given up is no failure of Redis: queued again at once.
            if (!(err instanceof LateStart)) throw err;
            this.lateStarts += 1;
          }
        }
      },
    );
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#watchdog);
    await this.limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
    // With a shared connection, disconnect() only unsubscribes this limiter (and returns no promise).
    try {
      await this.limiter.disconnect(false);
    } catch {
      /* the connection is closed below anyway */
    }
    await this.#onStop();
  }
}

/**
 * The LimiterFactory for `run --redis URL` (src/app/execute-run.ts). One Redis connection per process, opened by the
 * first shared limiter and closed when the last one stops.
 */
export function redisLimiterFactory(url: string, opts: RedisLimiterOptions = {}): LimiterFactory {
  let opened: Promise<{ connection: RepairedIORedisConnection }> | undefined;
  let users = 0;
  const suffix = opts.idSuffix ?? process.env.BRE_LIMITER_ID_SUFFIX ?? undefined;
  const margin = opts.margin ?? REDIS_MARGIN;

  const release = async () => {
    users -= 1;
    if (users > 0 || !opened) return;
    const { connection } = await opened;
    opened = undefined;
    connection.clock.stop();
    await connection.disconnect(true).catch(() => connection.disconnect(false));
  };

  return async (r: LimiterRequest): Promise<ServiceLimiter> => {
    const { service, rate } = r;
    if (!rate || !r.used) return localLimiter(r);

    opened ??= openRedis(url);
    let connection: RepairedIORedisConnection;
    try {
      ({ connection } = await opened);
    } catch (err) {
      opened = undefined;
      throw err;
    }
    users += 1;
    const id = limiterId(service, r.clientId, suffix, r.address);
    // Whole ms: with a key lifetime set, Bottleneck's Lua passes nextRequest (+= minTime) to PEXPIRE, which
    // rejects a fraction ("value is not an integer"). Rounding up keeps the spacing on the safe side.
    const minTime = clusterMinTime(rate, margin);
    const maxConcurrent = r.concurrency;
    const expiration = jobExpirationMs(r.timeoutMs, rate, maxConcurrent, margin);
    const bottleneck = new Bottleneck({
      id,
      datastore: 'ioredis',
      connection,
      clearDatastore: false,
      maxConcurrent,
      minTime,
      timeout: opts.keyTtlMs ?? 15 * 60_000,
    });
    try {
      await withTimeout(
        bottleneck.ready(),
        10_000,
        `the shared ${service}${r.address ? ` (${r.address})` : ''} limiter did not become ready on Redis at ${redactRedisUrl(url)}`,
      );
      const previous = await connection.client.hmget(`b_${id}_settings`, 'minTime', 'maxConcurrent');
      if (previous[0] !== null && Math.abs(Number(previous[0]) - minTime) > 0.01) {
        r.log(
          `shared ${service} limiter: another worker had set one start every ${Number(previous[0]).toFixed(1)} ms; now every ${minTime.toFixed(1)} ms (${describeRate(rate)}). Start every worker with the same --rate.`,
        );
      }
      await bottleneck.updateSettings({ minTime, maxConcurrent });
    } catch (err) {
      await bottleneck.disconnect(false);
      await release();
      throw err instanceof BreError
        ? err
        : new BreError(
            'CONFIG_INVALID',
            `cannot set up the shared ${service} limiter on Redis at ${redactRedisUrl(url)}: ${(err as Error).message}`,
            { cause: err, service },
          );
    }
    const limiter = new RedisLimiter({
      service,
      rate,
      concurrency: maxConcurrent,
      bottleneck,
      id,
      outageMs: opts.outageMs ?? 60_000,
      minTime,
      connection,
      onStop: release,
    });
    // Every job gets the expiration: Bottleneck reads per-job defaults from `jobDefaults` (a prototype
    // property in 2.19.5), and the chain schedules plain functions without options.
    const internal = bottleneck as unknown as { jobDefaults: Record<string, unknown> };
    internal.jobDefaults = { ...internal.jobDefaults, expiration };
    return limiter;
  };
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        t = setTimeout(() => reject(new BreError('CONFIG_INVALID', `${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(t);
  }
}
