/**
 * The HTTP client as a chain of wrappers. The order, outermost first, is written down here and only here:
 *
 *   retry  ->  limit  ->  time-out  ->  auth  ->  transport (undici Pool)
 *
 * - retry is outermost so that every attempt, retries included, goes through the service's limiter again;
 *   it sleeps the documented backoff (or Retry-After) OUTSIDE the limiter, holding no slot;
 * - limit spaces attempt starts and caps attempts in flight per service;
 * - time-out bounds the whole of one attempt, from its dispatch to the last byte of its answer: waiting for
 *   a connection, connecting, the headers and the body (a deadline per attempt, ./deadlines.ts, enforced by
 *   the transport, which owns the connection it aborts); the limiter wait is not counted against it. A cut
 *   attempt is TIMEOUT, retried like any; the limiter logs it as a call the server may have counted
 *   (../limits/pacer.ts);
 * - auth adds the two credential headers last, so nothing above ever holds the token.
 */
import { BreError, isRetryable, toBreError } from '../errors.js';
import { backoffDelayMs } from '../limits/backoff.js';
import { sleep as abortableSleep } from '../retry/sleep.js';
import type { ServiceLimiter } from '../limits/limiter.js';
import { CallStats } from '../metrics/service-stats.js';
import type { JsonObject, ServiceName } from '../types.js';
import { classifyResponse } from './classify.js';
import { Transport, type HttpRequest, type HttpResponse } from './transport.js';

export interface CallOptions {
  /** Whole-attempt time-out override in ms (otherwise the service's --timeout). */
  readonly timeoutMs?: number;
}

export interface CallResult {
  readonly status: number;
  /** The parsed JSON body of a 2xx answer. */
  readonly body: unknown;
  /** Attempts it took, retries included. */
  readonly attempts: number;
}

export interface ServiceTarget {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly limiter: ServiceLimiter;
  readonly connections: number;
}

export interface ClientOptions {
  readonly clientId: string;
  /** Read once from the environment or a file; held only inside the auth wrapper's closure. */
  readonly authToken: string;
  readonly maxAttempts: number;
  readonly targets: Readonly<Record<ServiceName, ServiceTarget>>;
  /** Aborted when the run stops taking work: queued attempts and backoff sleeps give up at once. */
  readonly signal: AbortSignal;
  /** Aborted when calls already in flight are abandoned too (after the stop's grace period). */
  readonly hardSignal?: AbortSignal;
  /** Test hook: replaces the backoff sleep. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  /** The source address of every connection (--local-address); undefined: the system picks. */
  readonly localAddress?: string;
  /**
   * Per-service stats every attempt and retry is also counted in: the run's, when each source address has a
   * client of its own (src/pipeline/egress.ts) whose `stats` are that address's.
   */
  readonly alsoStats?: Readonly<Record<ServiceName, CallStats>>;
}

/** `sent`: called when the request is written to a connection (the limiter's log, ../limits/pacer.ts). */
type Send = (req: HttpRequest, sent?: () => void) => Promise<HttpResponse>;
/** One attempt through the limiter; resolves to the parsed body, rejects with a BreError. */
type Attempt = (req: HttpRequest, retry: boolean) => Promise<unknown>;

/** What a limiter slot returns when the attempt was not sent because the service is paused after a 429. */
const PAUSED = Symbol('paused');
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export interface ServiceClient {
  /** `stageStats` receives the same per-attempt records as the service's own stats. */
  call(service: ServiceName, path: string, body: JsonObject, opts?: CallOptions, stageStats?: CallStats): Promise<CallResult>;
  readonly stats: Readonly<Record<ServiceName, CallStats>>;
  /** Milliseconds spent sleeping before retries (backoff or Retry-After), summed over calls, per service. */
  readonly retryWaitMs: Readonly<Record<ServiceName, number>>;
  close(): Promise<void>;
}

export function createClient(opts: ClientOptions): ServiceClient {
  const sleep = opts.sleep ?? abortableSleep;
  const transports = new Map<string, Transport>();
  const stats = { workflow: new CallStats(), bureau: new CallStats(), account: new CallStats() };
  const retryWaitMs: Record<ServiceName, number> = { workflow: 0, bureau: 0, account: 0 };
  const also = opts.alsoStats;
  opts.hardSignal?.addEventListener('abort', () => {
    for (const t of transports.values()) void t.destroy();
  }, { once: true });

  function transportFor(service: ServiceName): Transport {
    const t = opts.targets[service];
    let tr = transports.get(t.baseUrl);
    if (!tr) {
      tr = new Transport(t.baseUrl, Math.max(t.connections, 1), undefined, opts.localAddress);
      transports.set(t.baseUrl, tr);
    }
    return tr;
  }

  // auth: innermost, so the token never leaves this closure. One headers object for every request: the
  // credentials do not change during a run, and undici only reads it.
  const authHeaders: Record<string, string> = Object.freeze({ 'x-client-id': opts.clientId, 'x-auth-token': opts.authToken, 'content-type': 'application/json' }) as Record<string, string>;
  const withAuth = (next: Send): Send => (req, sent) => next({
    path: req.path,
    body: req.body,
    headers: req.headers === NO_HEADERS ? authHeaders : { ...req.headers, ...authHeaders },
  }, sent);

  // time-out and transport, measured per attempt.
  const timed = (service: ServiceName, timeoutMs: number, stageStats?: CallStats): Send => withAuth(async (req, sent) => {
    const started = Date.now();
    const t0 = performance.now();
    try {
      const res = await transportFor(service).send(service, req, timeoutMs, opts.hardSignal ?? opts.signal, sent);
      const ms = performance.now() - t0;
      stats[service].recordAttempt(started, ms, res.status);
      also?.[service].recordAttempt(started, ms, res.status);
      stageStats?.recordAttempt(started, ms, res.status);
      return res;
    } catch (err) {
      const e = toBreError(err, 'NETWORK');
      if (e.code !== 'INTERRUPTED') {
        const ms = performance.now() - t0;
        stats[service].recordAttempt(started, ms, e.code.toLowerCase());
        also?.[service].recordAttempt(started, ms, e.code.toLowerCase());
        stageStats?.recordAttempt(started, ms, e.code.toLowerCase());
      }
      throw e;
    }
  });

  // limit: one attempt = one slot of the service's limiter. An attempt still queued when the run stops is
  // abandoned at once: the limiter would otherwise release the queue one spacing interval at a time (a full
  // window of rows at 500/min is ~15 s), far past the stop's grace. A started attempt is left to finish
  // (or to the hard signal). One listener on the stop signal serves every queued attempt (a listener per
  // attempt cost a measurable share of a fast run).
  const queued = new Set<() => void>();
  opts.signal.addEventListener('abort', () => {
    for (const abandon of queued) abandon();
    queued.clear();
  }, { once: true });
  const abandoned = (service: ServiceName) => new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });

  /**
   * One attempt in one slot of the limiter. An attempt the limiter starts at once (inside `schedule`, as a
   * free in-process limiter does) has nothing left to abandon and costs no promise of its own; only one that
   * waits in the queue gets a promise the stop can reject.
   */
  function slot(limiter: ServiceLimiter, service: ServiceName, send: Send, req: HttpRequest, retry: boolean): Promise<unknown> {
    let state = 'queued' as 'queued' | 'started' | 'abandoned';
    const scheduled = limiter.schedule(async (sent) => {
      // Started: from here the attempt is left to finish. Abandoned while queued: not sent.
      if (state === 'abandoned' || opts.signal.aborted) throw abandoned(service);
      state = 'started';
      // Released by the limiter during a pause that began after it queued: give the slot up unsent.
      if (limiter.pausedUntil > Date.now()) return PAUSED;
      return classifyResponse(service, await send(req, sent));
    }, retry);
    if (state === 'started') return scheduled;
    return new Promise<unknown>((resolve, reject) => {
      const abandon = () => {
        if (state !== 'queued') return;
        state = 'abandoned';
        reject(abandoned(service));
      };
      queued.add(abandon);
      scheduled.then((value) => {
        queued.delete(abandon);
        resolve(value);
      }, (err: unknown) => {
        queued.delete(abandon);
        reject(err);
      });
    });
  }

  const limited = (service: ServiceName, send: Send): Attempt => async (req, retry) => {
    const limiter = opts.targets[service].limiter;
    for (;;) {
      if (opts.signal.aborted) throw abandoned(service);
      // After a 429 the whole service holds back until the pause ends (outside the limiter, holding no
      // slot); the limiter's spacing then spreads the waiting attempts out again.
      const wait = limiter.pausedUntil - Date.now();
      if (wait > 0) {
        await sleep(wait, opts.signal).catch(() => {
          throw abandoned(service);
        });
        continue;
      }
      const result = await slot(limiter, service, send, req, retry);
      if (result !== PAUSED) return result;
    }
  };

  // The attempt function of a service (with its time-out and a stage's stats) is built once, not per call.
  const attempts = new Map<CallStats | undefined, Map<ServiceName, Map<number, Attempt>>>();
  function attemptFor(service: ServiceName, timeoutMs: number, stageStats: CallStats | undefined): Attempt {
    let byService = attempts.get(stageStats);
    if (!byService) attempts.set(stageStats, (byService = new Map()));
    let byTimeout = byService.get(service);
    if (!byTimeout) byService.set(service, (byTimeout = new Map()));
    let fn = byTimeout.get(timeoutMs);
    if (!fn) byTimeout.set(timeoutMs, (fn = limited(service, timed(service, timeoutMs, stageStats))));
    return fn;
  }

  async function call(service: ServiceName, path: string, body: JsonObject, callOpts: CallOptions = {}, stageStats?: CallStats): Promise<CallResult> {
    const target = opts.targets[service];
    const attemptOnce = attemptFor(service, callOpts.timeoutMs ?? target.timeoutMs, stageStats);
    const req: HttpRequest = { path, headers: NO_HEADERS, body: JSON.stringify(body) };
    for (let attempt = 1; ; attempt += 1) {
      try {
        const parsed = await attemptOnce(req, attempt > 1);
        target.limiter.onSuccess();
        return { status: 200, body: parsed, attempts: attempt };
      } catch (err) {
        const e = toBreError(err, 'NETWORK');
        if (e.code === 'RATE_LIMITED') target.limiter.onThrottled(e.retryAfterSeconds);
        if (!isRetryable(e) || attempt >= opts.maxAttempts || opts.signal.aborted) {
          throw e.with({ attempts: attempt, service });
        }
        stats[service].retries += 1;
        if (also) also[service].retries += 1;
        if (stageStats) stageStats.retries += 1;
        const delay = backoffDelayMs(attempt, e.retryAfterSeconds, { random: opts.random });
        const slept = performance.now();
        try {
          await sleep(delay, opts.signal);
        } catch {
          throw new BreError('INTERRUPTED', `${service} call abandoned while waiting to retry: the run is stopping`, { service, attempts: attempt });
        } finally {
          retryWaitMs[service] += performance.now() - slept;
        }
      }
    }
  }

  return {
    call,
    stats,
    retryWaitMs,
    async close() {
      await Promise.all([...transports.values()].map((t) => t.close()));
    },
  };
}
