/**
 * The bottom of the chain: one undici keep-alive Pool per origin, driven through `Pool.dispatch()` with a
 * handler that reads every answer whole (never `fetch()`). `request()` is `dispatch()` plus a stream.Readable
 * per answer; every documented answer is a small JSON document read in one piece, and at thousands of calls a
 * second that Readable (its construction, events and ticks) was a large share of the runner's CPU and of its
 * garbage-collection time (figures in docs/performance.md). The handler keeps what `request()`
 * gave: the same Pool and keep-alive, the same error classes, and a body always consumed, by construction.
 *
 * The time-out (--timeout) bounds the whole attempt, from its dispatch to the last byte of its answer
 * (./deadlines.ts): connecting, waiting for the headers and reading the body all count. The deadline is kept
 * above (the chain's deadline layer, ./layers/deadline.ts, or `send` here); the transport owns the request, so
 * it is what aborts it. undici's own headersTimeout/bodyTimeout stay beneath it at the same length (they
 * bound the silence between bytes, from the request's write, so they never fire first); they are what is
 * left should the deadline's timer not run.
 */
import { Pool, ProxyAgent, errors as undiciErrors, type Dispatcher } from 'undici';
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';
import type { Route } from './network.js';
import { errorCodeOf, tlsFailure } from './tls-failure.js';
import { type AttemptDeadline, DeadlinePassed, Deadlines, timeoutError, withinDeadline } from './deadlines.js';

export interface HttpRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/**
 * Larger answers are cut while they stream (RESPONSE_TOO_LARGE; --max-response-size): no documented answer comes
 * near this, and each attempt in flight may hold up to this much, so calls in flight x this bounds the memory
 * answers take whatever a server sends (an endless body once took 2.5 GB with 20 rows).
 */
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** Why an answer was cut: it went past the size limit (at `received` bytes, or declared longer up front). */
class AnswerTooLarge extends Error {
  constructor(
    readonly status: number,
    readonly received: number,
    readonly declared: number | null,
    readonly limit: number,
  ) {
    super(`answer longer than ${limit} bytes`);
    this.name = 'AnswerTooLarge';
  }
}

export class Transport {
  readonly #pool: Pool | ProxyAgent;
  readonly origin: string;
  readonly #prefix: string;
  readonly #maxBytes: number;
  readonly #deadlines = new Deadlines();
  /** undici's ProxyAgent writes `host` into a request's headers: the chain's are one frozen object (auth). */
  readonly #copyHeaders: boolean;

  /**
   * `maxResponseBytes`: answers longer than this are cut there (the rest is not read). `localAddress`: the
   * source address every connection of the pool is bound to (--local-address); undefined lets the system pick.
   * `route`: the proxy to tunnel through and the TLS options for the origin (./network.ts); a client
   * certificate goes to the origin, through the tunnel (`requestTls`), never to the proxy.
   */
  constructor(
    baseUrl: string,
    connections: number,
    maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
    localAddress?: string,
    route?: Route,
  ) {
    this.#maxBytes = maxResponseBytes;
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#copyHeaders = route?.proxy !== undefined;
    const pooling = {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connectTimeout: 10_000,
    };
    this.#pool = route?.proxy
      ? new ProxyAgent({ uri: route.proxy, ...pooling, ...(route.tls ? { requestTls: route.tls } : {}) })
      : new Pool(url.origin, {
          ...pooling,
          ...(localAddress ? { localAddress } : {}),
          ...(route?.tls ? { connect: route.tls } : {}),
        });
  }

  /**
   * One attempt, cut with TIMEOUT when it has not been answered in full `timeoutMs` after this call (one
   * timer for every attempt, ./deadlines.ts). A run abandoning its calls destroys the pool (`destroy`), which
   * fails them at once, instead of every request listening on an abort signal. `sent` is called when the
   * request is written to a connection (after any wait for one); an attempt cut before that is never written.
   */
  send(
    service: ServiceName,
    req: HttpRequest,
    timeoutMs: number,
    signal?: AbortSignal,
    sent?: () => void,
  ): Promise<HttpResponse> {
    return withinDeadline(
      this.#deadlines,
      timeoutMs,
      (deadline) => this.dispatch(service, req, timeoutMs, signal, sent, deadline),
      () => timeoutError(service, timeoutMs),
    );
  }

  /**
   * One attempt under a deadline kept by the caller: `deadline` aborts the request when it passes (or keeps it
   * from being written, when it passes while the request waits for a connection). `timeoutMs` sets undici's
   * own time-outs beneath it.
   */
  dispatch(
    service: ServiceName,
    req: HttpRequest,
    timeoutMs: number,
    signal?: AbortSignal,
    sent?: () => void,
    deadline?: AttemptDeadline,
  ): Promise<HttpResponse> {
    return new Promise<HttpResponse>((resolve, reject) => {
      const fail = (err: unknown) => reject(classifyTransportError(service, this.origin, err, signal, timeoutMs));
      const handler = new WholeBody(this.#maxBytes, resolve, fail, sent, deadline);
      this.#pool.dispatch(
        {
          origin: this.origin,
          method: 'POST',
          path: this.#prefix + req.path,
          headers: this.#copyHeaders ? { ...req.headers } : req.headers,
          body: req.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        handler,
      );
    });
  }

  /** Abandons every call in flight. */
  destroy(): Promise<void> {
    this.#deadlines.clear();
    return this.#pool.destroy().catch(() => undefined);
  }

  close(): Promise<void> {
    this.#deadlines.clear();
    return this.#pool.close().catch(() => this.#pool.destroy());
  }
}

function classifyTransportError(
  service: ServiceName,
  origin: string,
  err: unknown,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): BreError {
  if (
    err instanceof DeadlinePassed ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError
  ) {
    return timeoutError(service, timeoutMs);
  }
  if (err instanceof AnswerTooLarge) {
    const how =
      err.declared !== null ? `declared ${err.declared} bytes (content-length)` : `cut after ${err.received} bytes`;
    return new BreError(
      'RESPONSE_TOO_LARGE',
      `${service} service's answer (HTTP ${err.status}) was longer than --max-response-size ${mib(err.limit)}: ${how}. No documented answer comes near this: an endless or misrouted body (a proxy serving a download, a runaway upstream); raise --max-response-size only if the service's answers are really that large`,
      { service, status: err.status },
    );
  }
  if (signal?.aborted) {
    return new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });
  }
  const tls = tlsFailure(service, origin, err);
  if (tls) return tls;
  const code = errorCodeOf(err);
  const text = code ? `${code}` : err instanceof Error ? err.message : String(err);
  return new BreError('NETWORK', `${service} service connection failed (${text})`, { service, cause: err });
}

/**
 * Collects one answer: status, headers and the whole body, decoded once as UTF-8 at the end (a chunk may end
 * inside a multi-byte character). A body over the cap is cut there and the connection dropped; what was read
 * is returned, and does not parse, so the chain sees a malformed answer. One settlement whatever undici calls
 * after it. Its deadline, when it passes, aborts the request through undici's controller once the request has
 * a connection, or, before that, as soon as it gets one (the request is then never written).
 */
class WholeBody implements Dispatcher.DispatchHandler {
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;
  readonly #maxBytes: number;
  readonly #resolve: (res: HttpResponse) => void;
  readonly #reject: (err: unknown) => void;
  readonly #sent: (() => void) | undefined;
  readonly #deadline: AttemptDeadline | undefined;

  constructor(
    maxBytes: number,
    resolve: (res: HttpResponse) => void,
    reject: (err: unknown) => void,
    sent?: () => void,
    deadline?: AttemptDeadline,
  ) {
    this.#maxBytes = maxBytes;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#sent = sent;
    this.#deadline = deadline;
  }

  /** undici calls it on a connection, just before it writes the request. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Cut while it waited for a connection: it is not written (undici checks right after this call).
    if (
      this.#deadline &&
      !this.#deadline.bind((reason) => {
        this.#fail(reason);
        controller.abort(reason);
      })
    ) {
      controller.abort(new DeadlinePassed());
      return;
    }
    this.#sent?.();
  }

  /** Called again after a 1xx interim answer: the last status and headers are the answer's. */
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[]>,
  ): void {
    this.#status = statusCode;
    this.#headers = headers;
    // Declared too long: cut before a byte of it is read.
    const declared = Number(headers['content-length']);
    if (statusCode >= 200 && Number.isFinite(declared) && declared > this.#maxBytes)
      this.#tooLarge(controller, declared);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    if (chunk.length > this.#maxBytes - this.#size) {
      this.#size += chunk.length;
      this.#tooLarge(controller, null);
      return;
    }
    this.#size += chunk.length;
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#settle();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(err);
  }

  /** Past the size limit: what was read is let go at once and the connection dropped. */
  #tooLarge(controller: Dispatcher.DispatchController, declared: number | null): void {
    const err = new AnswerTooLarge(this.#status, this.#size, declared, this.#maxBytes);
    this.#fail(err);
    controller.abort(err);
  }

  #fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = [];
    this.#reject(err);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    const c = this.#chunks;
    const text =
      c.length === 0 ? '' : c.length === 1 ? c[0].toString('utf8') : Buffer.concat(c, this.#size).toString('utf8');
    this.#chunks = [];
    this.#resolve({ status: this.#status, headers: this.#headers, text });
  }
}

/** A size in MiB when it is whole ones, else in bytes (as --max-response-size takes it). */
function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)}MiB` : `${bytes}`;
}
