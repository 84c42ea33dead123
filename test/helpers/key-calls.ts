/**
 * A test's own HTTP forwarder in front of a sandbox that counts the calls each key reached it with, per caller
 * address (the sandbox counts per caller, not per key): which worker of a job sent which row, and when (`seq`,
 * in the order the calls arrived). `hold(caller)` keeps that caller's calls from then on unanswered (counted, not
 * forwarded) until `release()` forwards them: rows in flight at a moment the test chooses.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface KeyCall {
  readonly key: string;
  readonly caller: string;
  /** Its place among every call the forwarder received, from 0. */
  readonly seq: number;
}

export interface KeyCalls {
  /** The forwarder's base URL, for the CLI's BRE_BASE_URL. */
  readonly url: string;
  /** Every call with a `reference_id` in its body, in the order they arrived. */
  calls(): readonly KeyCall[];
  /** Calls from `caller` kept unanswered from now on. */
  hold(caller: string): void;
  /** Calls held now. */
  held(): readonly KeyCall[];
  /** Stops holding, forwards the calls held and resolves once each one's answer is written back. */
  release(): Promise<void>;
  close(): Promise<void>;
}

export async function startKeyCalls(target: string): Promise<KeyCalls> {
  const to = new URL(target);
  const calls: KeyCall[] = [];
  let holding: string | undefined;
  let held: { call: KeyCall; forward: () => Promise<void> }[] = [];

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const out = request(
        { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          res.on('finish', () => resolve());
          res.on('close', () => resolve());
        },
      );
      out.on('error', () => {
        res.destroy();
        resolve();
      });
      out.end(body);
    });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const caller = req.socket.remoteAddress ?? '';
      let key: unknown;
      try {
        key = (JSON.parse(body.toString('utf8')) as { reference_id?: unknown }).reference_id;
      } catch {
        key = undefined;
      }
      if (typeof key !== 'string') {
        void forward(req, body, res);
        return;
      }
      const call = { key, caller, seq: calls.length };
      calls.push(call);
      if (holding === caller) held.push({ call, forward: () => forward(req, body, res) });
      else void forward(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    hold: (caller) => {
      holding = caller;
    },
    held: () => held.map((h) => h.call),
    async release() {
      holding = undefined;
      const now = held;
      held = [];
      await Promise.all(now.map((h) => h.forward()));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
