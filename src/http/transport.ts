/**
 * The bottom of the chain: one undici keep-alive Pool per origin, `request()` (not `fetch()`), bodies always
 * read to the end (or destroyed), every attempt bounded by its own time-out.
 */
import { Pool, errors as undiciErrors } from 'undici';
import { BreError } from '../errors.js';
import type { ServiceName } from '../types.js';

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

  constructor(baseUrl: string, connections: number) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#pool = new Pool(url.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      connectTimeout: 10_000,
    });
  }

  readonly #prefix: string;

  async send(service: ServiceName, req: HttpRequest, timeoutMs: number, signal?: AbortSignal): Promise<HttpResponse> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new TimeoutSignal()), timeoutMs);
    const onStop = () => ac.abort(signal?.reason);
    signal?.addEventListener('abort', onStop, { once: true });
    try {
      const res = await this.#pool.request({
        method: 'POST',
        path: this.#prefix + req.path,
        headers: req.headers,
        body: req.body,
        signal: ac.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          res.body.destroy();
          break;
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      throw classifyTransportError(service, err, ac.signal.reason, timeoutMs);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onStop);
    }
  }

  close(): Promise<void> {
    return this.#pool.close().catch(() => this.#pool.destroy());
  }
}

class TimeoutSignal extends Error {
  constructor() {
    super('attempt timed out');
  }
}

function classifyTransportError(service: ServiceName, err: unknown, reason: unknown, timeoutMs: number): BreError {
  if (reason instanceof TimeoutSignal || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new BreError('TIMEOUT', `${service} service did not answer within ${timeoutMs} ms`, { service });
  }
  if (reason instanceof BreError) return reason;
  if (reason !== undefined) {
    return new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });
  }
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const text = code ? `${code}` : err instanceof Error ? err.message : String(err);
  return new BreError('NETWORK', `${service} service connection failed (${text})`, { service, cause: err });
}
