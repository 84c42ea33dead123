/**
 * A pass-through proxy that counts, per reference_id, the successful answers that actually reached the
 * client: what "a row that succeeded is never sent again" is checked against. It can also keep the request
 * bodies it saw, to check what reached the API byte for byte.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, request } from 'undici';

export interface CountingProxy {
  readonly url: string;
  /** `<path> <reference_id>` -> 2xx answers with a JSON body that were delivered to the client in full. */
  readonly successes: Map<string, number>;
  /** Every request seen, and those whose upstream answer was 2xx but not JSON (malformed). */
  readonly counts: { requests: number; delivered2xx: number; malformed2xx: number; abandoned: number };
  /** Every request body received, in order of arrival (only with `keepBodies`; emptied by reset()). */
  readonly bodies: string[];
  /** Requests received whose answer has not been sent in full yet (in flight at this proxy). */
  inflight(): number;
  /** Keys answered successfully more than once, with their counts. */
  repeated(): Map<string, number>;
  /** Forgets every count (between tests that reuse row keys). */
  reset(): void;
  close(): Promise<void>;
}

function referenceOf(body: string): string | undefined {
  try {
    const v = JSON.parse(body) as { reference_id?: unknown };
    return typeof v.reference_id === 'string' ? v.reference_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A pass-through proxy in front of the sandbox that counts, per reference_id, the successful answers (2xx,
 * JSON body) that actually reached the client: a reset upstream resets the client's connection, and an
 * answer the client hung up on (its time-out, a kill) is not counted, because the client never saw it.
 */
export async function startCountingProxy(
  target: string,
  opts: { readonly keepBodies?: boolean } = {},
): Promise<CountingProxy> {
  const successes = new Map<string, number>();
  const bodies: string[] = [];
  const counts = { requests: 0, delivered2xx: 0, malformed2xx: 0, abandoned: 0 };
  const agent = new Agent({ connections: 512, keepAliveTimeout: 10_000 });
  const sockets = new Set<Socket>();
  let open = 0;
  const server = createServer({ keepAlive: true }, (req: IncomingMessage, res: ServerResponse) => {
    counts.requests += 1;
    open += 1;
    res.once('close', () => {
      open -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (opts.keepBodies) bodies.push(body);
      const ac = new AbortController();
      let clientGone = false;
      res.on('close', () => {
        if (!res.writableFinished) {
          clientGone = true;
          counts.abandoned += 1;
          ac.abort();
        }
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (
          typeof v === 'string' &&
          !['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding'].includes(k)
        )
          headers[k] = v;
      }
      request(target + (req.url ?? '/'), {
        method: req.method as 'POST',
        headers,
        body: req.method === 'GET' ? undefined : body,
        dispatcher: agent,
        signal: ac.signal,
      })
        .then(async (up) => {
          const text = await up.body.text();
          if (clientGone) return;
          const out: Record<string, string> = { 'content-length': String(Buffer.byteLength(text)) };
          for (const k of ['content-type', 'retry-after']) {
            const v = up.headers[k];
            if (typeof v === 'string') out[k] = v;
          }
          const ok = up.statusCode >= 200 && up.statusCode < 300;
          let json = false;
          try {
            JSON.parse(text);
            json = true;
          } catch {
            /* malformed */
          }
          if (ok && !json) counts.malformed2xx += 1;
          res.on('finish', () => {
            if (!ok || !json) return;
            counts.delivered2xx += 1;
            const ref = referenceOf(body);
            if (ref === undefined) return;
            const key = `${req.url} ${ref}`;
            successes.set(key, (successes.get(key) ?? 0) + 1);
          });
          res.writeHead(up.statusCode, out);
          res.end(text);
        })
        .catch(() => {
          // Upstream reset the connection (or the client left): reset the client's too.
          req.socket.destroy();
        });
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    successes,
    counts,
    bodies,
    inflight: () => open,
    repeated: () => new Map([...successes].filter(([, n]) => n > 1)),
    reset() {
      successes.clear();
      bodies.length = 0;
      Object.assign(counts, { requests: 0, delivered2xx: 0, malformed2xx: 0, abandoned: 0 });
    },
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await closed;
      await agent.destroy();
    },
  };
}
