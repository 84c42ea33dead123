/**
 * One node:http server on loopback serving the three services on one origin. Per request, in order:
 *   allow-list (403 HTML) -> route (404) -> sliding-window rate limit per IP per service (429)
 *   -> a gateway throttling everything for a while (429, Retry-After as set; --throttle-for)
 *   -> injected fault (429 / 503 / reset / slow / empty / html / endless; malformed and trickle change the answer)
 *   -> method (405) -> credentials (401) -> body (413, 422) -> handler -> latency -> answer.
 * The hot path allocates little: fixed routes are a Map lookup, windows are ring buffers, request ids a
 * random prefix plus a counter, and nothing is logged.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { ServiceName } from '@bre-batch/core/types';
import { SERVICES } from '@bre-batch/core/types';
import {
  FORBIDDEN,
  Fail,
  internalError,
  json,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  tooManyRequests,
  unauthorized,
  unavailable,
  validationFailed,
  type Answer,
} from './answers.js';
import { allowChecker, type Cidr } from './cidr.js';
import { rngFrom, type Rng } from './logic/hash.js';
import {
  validateFaults,
  validateRate,
  validateThrottle,
  type CallerRates,
  type Faults,
  type ThrottleWindow,
} from './options.js';
import { SlidingWindow, retryAfterSeconds, type Rate } from './rate.js';
import {
  aaFetchData,
  aaRetrieveReport,
  bsaFetchData,
  bsaFetchUploaded,
  bsaStatusCheck,
  serveReport,
} from './routes/account.js';
import { AccountState, type Handler } from './routes/context.js';
import { bureauFeaturesRoute, executeWorkflow } from './routes/decision.js';
import { FAULT_KINDS, ServiceCounter, type FaultKind, type SandboxStats } from './stats.js';
import { VersionSwitches, validateVersionSwitches, type VersionSwitch } from './versions.js';
import { BODY_MISSING, bodyNotObject, isObj, jsonInvalid, type FieldIssue, type Obj } from './validate.js';

export interface ServerConfig {
  readonly clientId: string;
  readonly authToken: string;
  readonly rates: Record<ServiceName, Rate | null>;
  /** Limits of single caller addresses over `rates` (an egress address throttled harder than the others). */
  readonly callerRates: CallerRates;
  readonly latencyMs: number;
  readonly faults: Faults;
  readonly slowMs: number;
  /** Ms between the bytes of a `trickle` answer's body. */
  readonly trickleMs: number;
  /**
   * A gateway in front that answers every service call 429 for `forMs` from the first call it sees (or from a
   * POST /__sandbox/throttle), with `Retry-After: retryAfter` seconds (0 as some gateways send), then lets calls
   * through. 0: never.
   */
  readonly throttle: ThrottleWindow;
  readonly seed: number | string;
  readonly allow: readonly Cidr[];
  readonly bsaReadyAfterMs: number;
  readonly bodyLimitBytes: number;
  readonly now: () => number;
  /** Workflow endpoints answering with another version from a call or a time on (./versions.ts). */
  readonly versionSwitches: readonly VersionSwitch[];
}

interface Route {
  readonly service: ServiceName;
  readonly handler: Handler;
}

const FIXED_ROUTES = new Map<string, Route>([
  ['/api/bureau', { service: 'bureau', handler: bureauFeaturesRoute }],
  ['/aa/fetch_data', { service: 'account', handler: aaFetchData }],
  ['/aa/retrieve_report', { service: 'account', handler: aaRetrieveReport }],
  ['/bsa/status_check', { service: 'account', handler: bsaStatusCheck }],
  ['/bsa/fetch_uploaded', { service: 'account', handler: bsaFetchUploaded }],
  ['/bsa/fetch_data', { service: 'account', handler: bsaFetchData }],
]);

const EXECUTE = /^\/execute\/([^/]+)\/([^/]+)$/;
const WINDOW_WHEN_OFF_MS = 60_000;

/** A placeholder "statement file" for the pre-signed-like URLs of fetch_uploaded. */
const PLACEHOLDER_PDF = '%PDF-1.4\n% bre-batch sandbox placeholder statement (no real data)\n%%EOF\n';

/** What a proxy in front of a service answers while the service is down for maintenance: a 200, in HTML. */
const MAINTENANCE_PAGE =
  '<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1><p>We will be back shortly.</p></body></html>';

function serviceOfPath(path: string): ServiceName | null {
  if (path.startsWith('/execute/')) return 'workflow';
  if (path.startsWith('/api/')) return 'bureau';
  if (path.startsWith('/aa/') || path.startsWith('/bsa/')) return 'account';
  return null;
}

/** A caller's address as its window and stats know it: IPv4-mapped IPv6 (::ffff:127.0.0.2) as IPv4. */
function callerKey(ip: string | undefined): string {
  if (!ip) return '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Position of a JSON syntax error, when the engine's message names it. */
function jsonErrorPosition(message: string, text: string): number {
  const m = /position (\d+)/.exec(message);
  if (m) return Number(m[1]);
  return /end of JSON/i.test(message) ? text.length : 0;
}

export class SandboxServer {
  readonly server: Server;
  readonly counters: Record<ServiceName, ServiceCounter> = {
    workflow: new ServiceCounter(),
    bureau: new ServiceCounter(),
    account: new ServiceCounter(),
  };
  readonly other = new ServiceCounter();
  readonly state = new AccountState();
  readonly versions: VersionSwitches;
  #config: ServerConfig;
  #rates: Record<ServiceName, Rate | null>;
  #windows: Record<ServiceName, Map<string, SlidingWindow>> = {
    workflow: new Map(),
    bureau: new Map(),
    account: new Map(),
  };
  #faults: Faults;
  #faultTotal = 0;
  #throttle: ThrottleWindow;
  /** Sandbox clock when the throttling window began (its first call); null before. */
  #throttleFrom: number | null = null;
  #rng: Rng;
  #allowed: (ip: string | undefined) => boolean;
  #loopback = allowChecker([
    { v6: false, bits: 0x7f000000n, prefix: 8, text: '127.0.0.0/8' },
    { v6: true, bits: 1n, prefix: 128, text: '::1' },
  ]);
  #offset = 0;
  #timers = new Set<NodeJS.Timeout>();
  #sockets = new Set<Socket>();
  #idPrefix = randomBytes(10).toString('hex');
  #idCounter = 0;
  #token: Buffer;
  #closing = false;
  /** Caller addresses whose connections are destroyed (a test's address whose network went away). */
  #blocked = new Set<string>();
  baseUrl = '';

  constructor(config: ServerConfig) {
    this.#config = config;
    this.#rates = { ...config.rates };
    this.#faults = {};
    this.setFaults(config.faults);
    this.#throttle = config.throttle;
    this.#rng = rngFrom(config.seed);
    this.#allowed = allowChecker(config.allow);
    this.#token = Buffer.from(config.authToken);
    this.versions = new VersionSwitches(config.versionSwitches, this.now());
    this.server = createServer({ keepAlive: true }, (req, res) => {
      // Never crash the process on a sandbox bug: answer 500 and keep serving.
      try {
        this.#handle(req, res);
      } catch {
        this.other.internalErrors++;
        try {
          this.#send(res, internalError(null));
        } catch {
          res.destroy();
        }
      }
    });
    // The client keeps connections alive (undici pool); outlive its idle time-out, bound slow headers.
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
    this.server.requestTimeout = 0;
    this.server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.server.on('clientError', (_err, socket: Socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      else socket.destroy();
    });
  }

  now(): number {
    return this.#config.now() + this.#offset;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`Expected a clock advance of 0 ms or more, got ${ms}`);
    this.#offset += ms;
  }

  setFaults(f: Faults | undefined): void {
    this.#faults = validateFaults(f ?? {});
    this.#faultTotal = FAULT_KINDS.reduce((s, k) => s + (this.#faults[k] ?? 0), 0);
  }

  get faults(): Faults {
    return { ...this.#faults };
  }

  /** Throttles every service call for `forMs` from the next call on (0 ends a window under way). */
  setThrottle(t: ThrottleWindow): void {
    this.#throttle = validateThrottle(t);
    this.#throttleFrom = null;
  }

  get throttle(): ThrottleWindow & { readonly startedAt: number | null } {
    return { ...this.#throttle, startedAt: this.#throttleFrom };
  }

  /** Whether the gateway still throttles at `now` (the window starts at the first call it sees). */
  #throttling(now: number): boolean {
    if (this.#throttle.forMs <= 0) return false;
    this.#throttleFrom ??= now;
    return now - this.#throttleFrom < this.#throttle.forMs;
  }

  setRate(service: ServiceName, rate: Rate | null): void {
    this.#rates[service] = validateRate(rate, `rate of ${service}`);
    this.#windows[service] = new Map();
  }

  get rates(): Record<ServiceName, Rate | null> {
    return { ...this.#rates };
  }

  stats(): SandboxStats {
    const services = Object.fromEntries(
      SERVICES.map((s) => [s, this.counters[s].snapshot(this.#rates[s])]),
    ) as SandboxStats['services'];
    return {
      seed: this.#config.seed,
      now: this.now(),
      services,
      other: { requests: this.other.requests, byStatus: { ...this.other.byStatus } },
    };
  }

  /** Destroys every connection from these caller addresses, now and until unblocked (an empty list). */
  setBlocked(addresses: readonly string[]): void {
    this.#blocked = new Set(addresses.map((a) => callerKey(a)));
    for (const sock of this.#sockets) if (this.#blocked.has(callerKey(sock.remoteAddress))) sock.destroy();
  }

  get blocked(): string[] {
    return [...this.#blocked];
  }

  resetStats(): void {
    for (const s of SERVICES) this.counters[s].reset();
    this.other.reset();
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  #later(ms: number, fn: () => void): void {
    if (this.#closing) return;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #requestId(): string {
    return this.#idPrefix + (++this.#idCounter).toString(16).padStart(12, '0');
  }

  #send(res: ServerResponse, a: Answer): void {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string | number> = {
      'content-type': a.contentType ?? 'application/json',
      'content-length': Buffer.byteLength(a.body),
      ...a.headers,
    };
    res.writeHead(a.status, headers);
    res.end(a.body);
  }

  /** Answers a service path: counts the status, applies the configured latency. */
  #answer(res: ServerResponse, counter: ServiceCounter, a: Answer): void {
    counter.status(a.status);
    if (this.#config.latencyMs > 0) this.#later(this.#config.latencyMs, () => this.#send(res, a));
    else this.#send(res, a);
  }

  /**
   * The answer's headers at once (its full content-length), then its body one byte every `trickleMs`: a
   * server or proxy that is never silent for long and never done. The client's time-out must cut it.
   */
  #trickle(res: ServerResponse, counter: ServiceCounter, a: Answer): void {
    counter.status(a.status);
    if (res.headersSent || res.destroyed) return;
    const body = Buffer.from(a.body);
    res.writeHead(a.status, {
      'content-type': a.contentType ?? 'application/json',
      'content-length': body.length,
      ...a.headers,
    });
    res.flushHeaders();
    let sent = 0;
    res.on('close', () => {
      if (sent < body.length) counter.trickles.cut++;
    });
    const step = () => {
      if (res.destroyed) return;
      sent += 1;
      if (sent < body.length) {
        res.write(body.subarray(sent - 1, sent));
        this.#later(this.#config.trickleMs, step);
      } else {
        counter.trickles.completed++;
        res.end(body.subarray(sent - 1));
      }
    };
    if (body.length === 0) {
      counter.trickles.completed++;
      res.end();
    } else this.#later(this.#config.trickleMs, step);
  }

  /**
   * A 200 whose JSON body never ends: the headers, then 64 KiB chunks as fast as the client reads them, until it
   * hangs up (a proxy streaming a runaway upstream, a misrouted file download). The client must cut it.
   */
  #endless(res: ServerResponse, counter: ServiceCounter): void {
    counter.status(200);
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"padding": "');
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (!res.destroyed && !this.#closing) {
        counter.endlessBytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }

  #drawFault(): FaultKind | null {
    if (this.#faultTotal <= 0) return null;
    let u = this.#rng();
    for (const k of FAULT_KINDS) {
      const p = this.#faults[k] ?? 0;
      if (u < p) return k;
      u -= p;
    }
    return null;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path.startsWith('/__')) {
      this.#internal(req, res, path);
      return;
    }

    let route = FIXED_ROUTES.get(path);
    let params: Record<string, string> = {};
    if (!route) {
      const m = EXECUTE.exec(path);
      if (m) {
        route = { service: 'workflow', handler: executeWorkflow };
        params = { client_id: decode(m[1]), endpoint: decode(m[2]) };
      }
    }
    const service = route?.service ?? serviceOfPath(path);
    const counter = service ? this.counters[service] : this.other;
    counter.requests++;
    const ip = req.socket.remoteAddress;
    if (!this.#allowed(ip)) {
      this.#answer(res, counter, FORBIDDEN);
      return;
    }
    if (!route || !service) {
      this.#answer(res, counter, notFound(service));
      return;
    }

    // Sliding window per caller IP (refused requests do not enter the window).
    const windows = this.#windows[service];
    const key = callerKey(ip);
    const caller = counter.caller(key);
    caller.requests++;
    if (this.#blocked.has(key)) {
      caller.blocked++;
      req.socket.destroy();
      return;
    }
    // The gateway in front throttles before the service's own limiter sees the call.
    if (this.#throttling(this.now())) {
      counter.gatewayThrottled++;
      req.resume();
      this.#answer(res, counter, tooManyRequests(this.#throttle.retryAfter));
      return;
    }
    let win = windows.get(key);
    if (!win) {
      const own = this.#config.callerRates[key]?.[service];
      const rate = own === undefined ? this.#rates[service] : own;
      win = new SlidingWindow(rate ? rate.limit : null, rate ? rate.windowMs : WINDOW_WHEN_OFF_MS);
      windows.set(key, win);
    }
    const now = this.now();
    const wait = win.hit(now);
    if (wait > 0) {
      counter.throttled++;
      caller.throttled++;
      this.#answer(res, counter, tooManyRequests(retryAfterSeconds(wait)));
      return;
    }
    counter.admit(now, win, caller);

    const fault = this.#drawFault();
    if (fault) counter.faults[fault]++;
    switch (fault) {
      case '429':
        this.#answer(res, counter, tooManyRequests(1));
        return;
      case '503':
        this.#answer(res, counter, unavailable(service));
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'slow':
        this.#later(this.#config.slowMs, () => this.#serve(req, res, route, service, counter, params, null));
        return;
      // What a proxy in front of the service may answer: a 200 with no body, or its maintenance page.
      case 'empty':
        req.resume();
        this.#answer(res, counter, { status: 200, body: '' });
        return;
      case 'html':
        req.resume();
        this.#answer(res, counter, { status: 200, body: MAINTENANCE_PAGE, contentType: 'text/html; charset=utf-8' });
        return;
      case 'endless':
        req.resume();
        this.#endless(res, counter);
        return;
      default:
        this.#serve(req, res, route, service, counter, params, fault);
    }
  }

  /** `fault`: `malformed` cuts the answer's body in half, `trickle` sends it a byte at a time. */
  #serve(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route,
    service: ServiceName,
    counter: ServiceCounter,
    params: Record<string, string>,
    fault: FaultKind | null,
  ): void {
    const reply = (a: Answer) => {
      if (fault === 'malformed') {
        // A 200 whose body is cut short: never valid JSON (every body starts with '{').
        const cut = a.body.slice(0, Math.max(1, Math.floor(a.body.length / 2)));
        this.#answer(res, counter, { status: 200, body: cut });
      } else if (fault === 'trickle') this.#trickle(res, counter, a);
      else this.#answer(res, counter, a);
    };
    if (req.method !== 'POST') {
      reply(methodNotAllowed(service, 'POST'));
      return;
    }
    const requestId = this.#requestId();
    const h = req.headers;
    const id = h['x-client-id'];
    const token = h['x-auth-token'];
    if (
      id !== this.#config.clientId ||
      typeof token !== 'string' ||
      !this.#tokenOk(token) ||
      (params.client_id !== undefined && params.client_id !== this.#config.clientId)
    ) {
      reply(unauthorized(service, requestId));
      return;
    }
    this.#readBody(req, service, (problem, body) => {
      if (problem) {
        reply(problem);
        return;
      }
      let a: Answer;
      try {
        a = route.handler({
          body: body!,
          requestId,
          now: this.now(),
          baseUrl: h.host ? `http://${h.host}` : this.baseUrl,
          state: this.state,
          bsaReadyAfterMs: this.#config.bsaReadyAfterMs,
          params,
          variantOf: (endpoint, base) => this.versions.variantOf(endpoint, base, this.now()),
        });
      } catch (err) {
        if (err instanceof Fail) a = err.answer;
        else {
          counter.internalErrors++;
          a = internalError(service);
        }
      }
      reply(a);
    });
  }

  #tokenOk(token: string): boolean {
    // Length first: equal-length comparison is the only kind timing-safe compare supports.
    if (Buffer.byteLength(token) !== this.#token.length) return false;
    let diff = 0;
    const b = Buffer.from(token);
    for (let i = 0; i < b.length; i++) diff |= b[i] ^ this.#token[i];
    return diff === 0;
  }

  /** Reads and parses a JSON body the way FastAPI does (content type, json_invalid, body limit). */
  #readBody(req: IncomingMessage, service: ServiceName, done: (problem: Answer | null, body?: Obj) => void): void {
    const limit = this.#config.bodyLimitBytes;
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      done(payloadTooLarge(service, limit));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        done(payloadTooLarge(service, limit));
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => {
      /* the socket is gone; nothing to answer */
    });
    req.on('end', () => {
      if (over) return;
      const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
      const issue = this.#parse(text, req.headers['content-type']);
      if ('issue' in issue) done(validationFailed(service, [issue.issue]));
      else done(null, issue.body);
    });
  }

  #parse(text: string, contentType: string | undefined): { body: Obj } | { issue: FieldIssue } {
    if (text.length === 0) return { issue: BODY_MISSING };
    if (contentType) {
      const ct = contentType.split(';')[0].trim().toLowerCase();
      const isJson = ct === 'application/json' || (ct.startsWith('application/') && ct.endsWith('+json'));
      if (!isJson) return { issue: bodyNotObject(text) };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const msg = (err as Error).message;
      return { issue: jsonInvalid(jsonErrorPosition(msg, text), msg.replace(/ in JSON at position \d+.*$/, '')) };
    }
    return isObj(value) ? { body: value } : { issue: bodyNotObject(value) };
  }

  // ------------------------------------------------------------------ /__sandbox, /__reports, /__files

  #internal(req: IncomingMessage, res: ServerResponse, path: string): void {
    const ip = req.socket.remoteAddress;
    const out = (a: Answer) => {
      this.other.status(a.status);
      this.#send(res, a);
    };
    if (!this.#loopback(ip) && !this.#allowed(ip)) {
      out(FORBIDDEN);
      return;
    }
    const method = req.method ?? 'GET';
    if (path.startsWith('/__reports/')) {
      if (method !== 'GET') {
        out(methodNotAllowed(null, 'GET'));
        return;
      }
      const token = decode(path.slice('/__reports/'.length)).replace(/\.csv$/, '');
      out(serveReport(this.state, token, this.now()));
      return;
    }
    if (path.startsWith('/__files/')) {
      if (method !== 'GET') {
        out(methodNotAllowed(null, 'GET'));
        return;
      }
      out({ status: 200, body: PLACEHOLDER_PDF, contentType: 'application/pdf' });
      return;
    }
    const control = CONTROL[`${method} ${path}`];
    if (!control) {
      const known = Object.keys(CONTROL).some((k) => k.endsWith(` ${path}`));
      out(
        known
          ? methodNotAllowed(
              null,
              Object.keys(CONTROL)
                .filter((k) => k.endsWith(` ${path}`))
                .map((k) => k.split(' ')[0])
                .join(', '),
            )
          : notFound(null),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 65_536) chunks.push(c);
    });
    req.on('error', () => {});
    req.on('end', () => {
      let body: unknown = {};
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (size > 65_536) {
        out(json(413, { detail: `Expected a control body of at most 65536 bytes, got ${size}` }));
        return;
      }
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          out(json(400, { detail: `Expected a JSON body, got '${text.slice(0, 60)}'` }));
          return;
        }
      }
      try {
        out(json(200, control(this, body)));
      } catch (err) {
        out(json(400, { detail: (err as Error).message }));
      }
    });
  }
}

type Control = (s: SandboxServer, body: unknown) => unknown;

const clockView = (s: SandboxServer) => ({ now: s.now(), iso: new Date(s.now()).toISOString() });

/** Control paths (no auth, no rate limit, no faults), for tests that run the sandbox as a separate process. */
const CONTROL: Record<string, Control> = {
  'GET /__sandbox/stats': (s) => s.stats(),
  'POST /__sandbox/stats/reset': (s) => {
    s.resetStats();
    return s.stats();
  },
  'GET /__sandbox/clock': (s) => clockView(s),
  'POST /__sandbox/clock': (s, body) => {
    const ms = isObj(body) ? body.advanceMs : undefined;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      throw new Error(`Expected {"advanceMs": a number >= 0}, got ${JSON.stringify(body)}`);
    s.advance(ms);
    return clockView(s);
  },
  'GET /__sandbox/faults': (s) => s.faults,
  'GET /__sandbox/throttle': (s) => s.throttle,
  'POST /__sandbox/throttle': (s, body) => {
    s.setThrottle(body as ThrottleWindow);
    return s.throttle;
  },
  'POST /__sandbox/faults': (s, body) => {
    s.setFaults(body as Faults);
    return s.faults;
  },
  'GET /__sandbox/versions': (s) => s.versions.switches,
  'POST /__sandbox/versions': (s, body) => {
    s.versions.set(validateVersionSwitches(body));
    return s.versions.switches;
  },
  'GET /__sandbox/blocked': (s) => ({ addresses: s.blocked }),
  'POST /__sandbox/blocked': (s, body) => {
    const list = isObj(body) ? body.addresses : undefined;
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string'))
      throw new Error(
        `Expected {"addresses": ["127.0.0.3", ...]} (an empty list unblocks), got ${JSON.stringify(body)}`,
      );
    s.setBlocked(list as string[]);
    return { addresses: s.blocked };
  },
  'GET /__sandbox/rate': (s) => s.rates,
  'POST /__sandbox/rate': (s, body) => {
    if (!isObj(body))
      throw new Error(
        `Expected an object such as {"workflow": {"limit": 500, "windowMs": 60000}} or {"bureau": null}, got ${JSON.stringify(body)}`,
      );
    for (const [k, v] of Object.entries(body)) {
      if (!(SERVICES as readonly string[]).includes(k))
        throw new Error(`Expected a service among ${SERVICES.join(', ')}, got '${k}'`);
      s.setRate(k as ServiceName, v as Rate | null);
    }
    return s.rates;
  },
};
