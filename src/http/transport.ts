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

  /**
   * One attempt. The time-out is undici's own headersTimeout/bodyTimeout (no answer within the time, or a
   * body that stalls that long): no timer or AbortController per request, which matters at thousands of
   * calls a second. A run abandoning its calls destroys the pool (`destroy`), which fails them at once,
   * instead of every request listening on an abort signal.
   */
  async send(service: ServiceName, req: HttpRequest, timeoutMs: number, signal?: AbortSignal): Promise<HttpResponse> {
    try {
      const res = await this.#pool.request({
        method: 'POST',
        path: this.#prefix + req.path,
        headers: req.headers,
        body: req.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      // A declared length within the cap (every documented answer): undici's own body reader, which is
      // cheaper than iterating the stream and checks the length itself. Otherwise read with a cap.
      const declared = Number(res.headers['content-length']);
      if (declared >= 0 && declared <= MAX_RESPONSE_BYTES) {
        return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
      }
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
      return { status: res.statusCode, headers: res.headers, text: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      throw classifyTransportError(service, err, signal, timeoutMs);
    }
  }

  /** Abandons every call in flight. */
  destroy(): Promise<void> {
    return this.#pool.destroy().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.#pool.close().catch(() => this.#pool.destroy());
  }
}

function classifyTransportError(service: ServiceName, err: unknown, signal: AbortSignal | undefined, timeoutMs: number): BreError {
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new BreError('TIMEOUT', `${service} service did not answer within ${timeoutMs} ms`, { service });
  }
  if (signal?.aborted) {
    return new BreError('INTERRUPTED', `${service} call abandoned: the run is stopping`, { service });
  }
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  const text = code ? `${code}` : err instanceof Error ? err.message : String(err);
  return new BreError('NETWORK', `${service} service connection failed (${text})`, { service, cause: err });
}
