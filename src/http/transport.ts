/**
 * The bottom of the chain: one undici keep-alive Pool per origin, driven through `Pool.dispatch()` with a
 * handler that reads every answer whole (never `fetch()`). `request()` is `dispatch()` plus a stream.Readable
 * per answer; every documented answer is a small JSON document read in one piece, and at thousands of calls a
 * second that Readable (its construction, events and ticks) was a large share of the runner's CPU and of its
 * garbage-collection time (figures in the README's Performance section). The handler keeps what `request()`
 * gave: the same Pool and keep-alive, the same error classes, and a body always consumed, by construction.
 *
 * The time-out (--timeout) bounds the whole attempt, from its dispatch to the last byte of its answer
 * (./deadlines.ts): connecting, waiting for the headers and reading the body all count. undici's own
 * headersTimeout/bodyTimeout stay beneath it at the same length (they bound the silence between bytes, from
 * the request's write, so they never fire first); they are what is left should the deadline's timer not run.
 */
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { BreError } from '../errors.js';
import type { ServiceName } from '../types.js';
import { Deadlines, type Expiring } from './deadlines.js';

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

/** Larger answers are cut off and treated as malformed: no documented response comes near this. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class Transport {
  readonly #pool: Pool;
  readonly origin: string;
  readonly #prefix: string;
  readonly #maxBytes: number;
  readonly #deadlines = new Deadlines();

  /**
   * `maxResponseBytes`: answers longer than this are cut there (the rest is not read). `localAddress`: the
   * source address every connection of the pool is bound to (--local-address); undefined lets the system pick.
   */
  constructor(baseUrl: string, connections: number, maxResponseBytes = MAX_RESPONSE_BYTES, localAddress?: string) {
    this.#maxBytes = maxResponseBytes;
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(url.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connectTimeout: 10_000,
      ...(localAddress ? { localAddress } : {}),
    });
  }

  /**
   * One attempt, cut with TIMEOUT when it has not been answered in full `timeoutMs` after this call (one
   * timer for every attempt, ./deadlines.ts). A run abandoning its calls destroys the pool (`destroy`), which
   * fails them at once, instead of every request listening on an abort signal. `sent` is called when the
   * request is written to a connection (after any wait for one); an attempt cut before that is never written.
   */
  send(service: ServiceName, req: HttpRequest, timeoutMs: number, signal?: AbortSignal, sent?: () => void): Promise<HttpResponse> {
    return new Promise<HttpResponse>((resolve, reject) => {
      const fail = (err: unknown) => reject(classifyTransportError(service, err, signal, timeoutMs));
      const handler = new WholeBody(this.#maxBytes, resolve, fail, sent, this.#deadlines);
      this.#deadlines.add(timeoutMs, handler);
      this.#pool.dispatch({
        method: 'POST',
        path: this.#prefix + req.path,
        headers: req.headers,
        body: req.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }, handler);
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

/** The reason an attempt is cut with when its deadline passes (classified as TIMEOUT below). */
class DeadlinePassed extends Error {
  constructor() {
    super('the attempt\'s deadline passed');
    this.name = 'DeadlinePassed';
  }
}

function classifyTransportError(service: ServiceName, err: unknown, signal: AbortSignal | undefined, timeoutMs: number): BreError {
  if (err instanceof DeadlinePassed || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new BreError('TIMEOUT', `${service} service did not answer in full within ${timeoutMs} ms (--timeout bounds the whole attempt: connecting, the headers and the body)`, { service });
  }
  if (signal?.aborted) {
    return new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });
  }
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const text = code ? `${code}` : err instanceof Error ? err.message : String(err);
  return new BreError('NETWORK', `${service} service connection failed (${text})`, { service, cause: err });
}

/**
 * Collects one answer: status, headers and the whole body, decoded once as UTF-8 at the end (a chunk may end
 * inside a multi-byte character). A body over the cap is cut there and the connection dropped; what was read
 * is returned, and does not parse, so the chain sees a malformed answer. One settlement whatever undici calls
 * after it. Its deadline (`expire`) fails it at once and aborts the request: through undici's controller once
 * the request has a connection, or, before that, as soon as it gets one (the request is then never written).
 */
class WholeBody implements Dispatcher.DispatchHandler, Expiring {
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;
  readonly #maxBytes: number;
  readonly #resolve: (res: HttpResponse) => void;
  readonly #reject: (err: unknown) => void;
  readonly #sent: (() => void) | undefined;
  readonly #deadlines: Deadlines | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #expired = false;

  constructor(maxBytes: number, resolve: (res: HttpResponse) => void, reject: (err: unknown) => void, sent?: () => void, deadlines?: Deadlines) {
    this.#maxBytes = maxBytes;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#sent = sent;
    this.#deadlines = deadlines;
  }

  get done(): boolean {
    return this.#settled;
  }

  expire(): void {
    if (this.#settled) return;
    this.#expired = true;
    const reason = new DeadlinePassed();
    this.#fail(reason);
    this.#controller?.abort(reason);
  }

  /** undici calls it on a connection, just before it writes the request. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Cut while it waited for a connection: it is not written (undici checks right after this call).
    if (this.#expired) {
      controller.abort(new DeadlinePassed());
      return;
    }
    this.#sent?.();
  }

  /** Called again after a 1xx interim answer: the last status and headers are the answer's. */
  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    const room = this.#maxBytes - this.#size;
    if (chunk.length > room) {
      if (room > 0) this.#chunks.push(chunk.subarray(0, room));
      this.#size = this.#maxBytes;
      this.#settle();
      controller.abort(new Error(`answer longer than ${this.#maxBytes} bytes`));
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

  #fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = [];
    this.#deadlines?.settled();
    this.#reject(err);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadlines?.settled();
    const c = this.#chunks;
    const text = c.length === 0 ? '' : c.length === 1 ? c[0].toString('utf8') : Buffer.concat(c, this.#size).toString('utf8');
    // The handler may wait in the deadlines' queue a while longer: it holds no body meanwhile.
    this.#chunks = [];
    this.#resolve({ status: this.#status, headers: this.#headers, text });
  }
}
