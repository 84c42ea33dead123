/**
 * The HTTP client: small layers over the next dispatch (./layers/, one file each), composed here and only
 * here (`createClient`, where their order and the reason for it are written). Outermost first:
 *
 *   retry -> first calls -> limit -> sendable -> classify -> measure (and spend) -> deadline -> auth -> transport
 *   (undici Pool)
 */
import type { ServiceLimiter } from '../limits/limiter.js';
import type { CallStats } from '../metrics/service-stats.js';
import type { JsonObject, ServiceName } from '@bre-batch/core/types';
import { Deadlines } from './deadlines.js';
import { auth, NO_HEADERS } from './layers/auth.js';
import { classify } from './layers/classify.js';
import { deadline } from './layers/deadline.js';
import { firstCalls } from './layers/first-calls.js';
import { limit } from './layers/limit.js';
import { measure, Meter } from './layers/measure.js';
import { retry } from './layers/retry.js';
import { sendable } from './layers/sendable.js';
import type { SpendMeter } from '../limits/spend.js';
import { sleep as abortableSleep } from '../retry/sleep.js';
import type { Dispatch } from './layers/types.js';
import { routeOf, type NetworkSettings } from './network.js';
import { Transport, type HttpResponse } from './transport.js';

export interface CallOptions {
  /** Whole-attempt time-out override in ms (otherwise the service's --timeout). */
  readonly timeoutMs?: number;
  /** What each attempt of the call costs, micro-units (the stage's price); undefined: not priced. */
  readonly price?: number;
  /**
   * Asked before each attempt is sent, once the limiter has let it go: false, it is not sent and the call fails
   * INTERRUPTED (./layers/sendable.ts; a job's worker that lost the row's chunk). Undefined: always sent.
   */
  readonly sendable?: () => boolean | Promise<boolean>;
}

export interface CallResult {
  readonly status: number;
  /** The parsed JSON body of a 2xx answer. */
  readonly body: unknown;
  /** Attempts it took, retries included. */
  readonly attempts: number;
}

/** @public */
export interface ServiceTarget {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly limiter: ServiceLimiter;
  readonly connections: number;
}

export interface ClientOptions {
  readonly clientId: string;
  /** Read once from the environment or a file; held only inside the auth layer's closure. */
  readonly authToken: string;
  /** Attempts per call before it fails; 429s are not counted (./layers/retry.ts). */
  readonly maxAttempts: number;
  /** How long a service may answer nothing but 429s before its calls stop the run (THROTTLED; ./layers/limit.ts). */
  readonly throttleDeadlineMs?: number;
  /** Answers longer than this are cut while they stream (RESPONSE_TOO_LARGE; ./transport.ts). */
  readonly maxResponseBytes?: number;
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
  /** Proxies and TLS settings (./network.ts); undefined: direct, Node's defaults. */
  readonly network?: NetworkSettings;
  /** The run's spend, when calls have a price: every priced attempt is counted in it. */
  readonly spend?: SpendMeter;
}

export interface ServiceClient {
  /** `stageStats` receives the same per-attempt records as the service's own stats. */
  call(
    service: ServiceName,
    path: string,
    body: JsonObject,
    opts?: CallOptions,
    stageStats?: CallStats,
  ): Promise<CallResult>;
  readonly stats: Readonly<Record<ServiceName, CallStats>>;
  /** Milliseconds spent sleeping before retries (backoff or Retry-After), summed over calls, per service. */
  readonly retryWaitMs: Readonly<Record<ServiceName, number>>;
  close(): Promise<void>;
}

/** One pool per base URL and TLS settings: services that share both share its connections. */
function transportsOf(opts: ClientOptions): Record<ServiceName, Transport> {
  const made: { baseUrl: string; tls: unknown; transport: Transport }[] = [];
  const pick = (service: ServiceName): Transport => {
    const t = opts.targets[service];
    const tls = opts.network?.tls[service];
    const same = made.find((m) => m.baseUrl === t.baseUrl && m.tls === tls);
    if (same) return same.transport;
    const transport = new Transport(
      t.baseUrl,
      Math.max(t.connections, 1),
      opts.maxResponseBytes,
      opts.localAddress,
      routeOf(service, t.baseUrl, opts.network),
    );
    made.push({ baseUrl: t.baseUrl, tls, transport });
    return transport;
  };
  return { workflow: pick('workflow'), bureau: pick('bureau'), account: pick('account') };
}

/**
 * The layers in their order, and why:
 * - retry is outermost so that every attempt, retries included, goes through the service's limiter again;
 *   it sleeps the documented backoff (or a longer Retry-After) OUTSIDE the limiter, holding no slot; a 429 is
 *   the service's state, not the call's: it is not counted against --max-attempts, and the service's pause
 *   (the limit layer) is its back-off;
 * - first calls holds a service's undocumented answers (HTTP_ERROR) until one call succeeds: the same one on
 *   all its first calls is the configuration's fault (SERVICE_MISCONFIGURED stops the run), not the rows'. It
 *   is above the limiter, so an answer it holds holds no slot; below retry, which never retries it;
 * - limit spaces attempt starts and caps attempts in flight per service; classification is below it, so it
 *   hears of a 429 (the whole service pauses) and of a success by the answer's code;
 * - sendable asks the call, when the limiter lets an attempt go, whether it is still wanted (a job's worker:
 *   whether it still holds the row's chunk): right below the limiter, because a queued attempt may wait there
 *   long (a full queue, a pause after a 429, the process stalled), so nothing later is left to ask before the
 *   request; above classify and measure, so an attempt not sent is neither priced nor measured;
 * - measure counts every attempt the limiter let through, with its outcome and duration, and when calls have a
 *   price, in the same frame, each priced attempt pending while it is out, then billed or not by the billing
 *   rule from what it saw (../limits/spend.ts; ./layers/measure.ts says why not a layer of its own); the cap
 *   itself is checked before a row starts;
 * - deadline (time-out) bounds the whole of one attempt, from its dispatch to the last byte of its answer:
 *   waiting for a connection, connecting, the headers and the body (./deadlines.ts; the transport, which
 *   owns the connection, aborts it); the limiter wait is not counted against it. A cut attempt is TIMEOUT,
 *   retried like any; the limiter logs it as a call the server may have counted (../limits/pacer.ts);
 * - auth adds the two credential headers last, so nothing above ever holds the token.
 */
export function createClient(opts: ClientOptions): ServiceClient {
  const sleep = opts.sleep ?? abortableSleep;
  const transports = transportsOf(opts);
  const pools = [...new Set(Object.values(transports))];
  const deadlines = new Deadlines();
  const meter = new Meter(opts.alsoStats);
  const inFlight = opts.hardSignal ?? opts.signal;
  opts.hardSignal?.addEventListener(
    'abort',
    () => {
      deadlines.clear();
      for (const t of pools) void t.destroy();
    },
    { once: true },
  );

  const transport: Dispatch<HttpResponse> = (a) =>
    transports[a.service].dispatch(a.service, a.request, a.timeoutMs, inFlight, a.sent, a.deadline);

  // The order of the layers, outermost first (why: this file's head comment).
  const dispatch = retry({ maxAttempts: opts.maxAttempts, signal: opts.signal, sleep, random: opts.random, meter })(
    firstCalls()(
      limit({
        limiterOf: (service) => opts.targets[service].limiter,
        signal: opts.signal,
        sleep,
        throttleDeadlineMs: opts.throttleDeadlineMs,
        waited: (service, ms) => meter.waited(service, ms),
      })(
        sendable()(
          classify(measure(meter, opts.spend)(deadline(deadlines)(auth(opts.clientId, opts.authToken)(transport)))),
        ),
      ),
    ),
  );

  return {
    async call(service, path, body, callOpts = {}, stageStats) {
      const { body: parsed, attempts } = await dispatch({
        service,
        request: { path, headers: NO_HEADERS, body: JSON.stringify(body) },
        timeoutMs: callOpts.timeoutMs ?? opts.targets[service].timeoutMs,
        number: 1,
        stageStats,
        price: callOpts.price,
        sendable: callOpts.sendable,
        sent: undefined,
        deadline: undefined,
      });
      return { status: 200, body: parsed, attempts };
    },
    stats: meter.stats,
    retryWaitMs: meter.retryWaitMs,
    async close() {
      deadlines.clear();
      await Promise.all(pools.map((t) => t.close()));
    },
  };
}
