import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/http/chain.js';
import { PacedLimiter } from '../../src/limits/paced.js';
import type { BreError } from '@bre-batch/core/errors';
import { waitFor } from '../helpers/wait.js';

let server: Server;
let base = '';
/** Every request the server received: its path, token, and when it arrived (this process's clock). */
const seen: { path: string; token: string | undefined; at: number }[] = [];
const script = new Map<string, number[]>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url!, token: req.headers['x-auth-token'] as string | undefined, at: Date.now() });
      const plan = script.get(req.url!) ?? [];
      const status = plan.shift() ?? 200;
      if (status === 0) return; // hang: the client's time-out must fire
      if (status === -1) return req.socket.destroy();
      const retryAfter = req.url!.startsWith('/pause') ? '1' : '0';
      res.writeHead(status, {
        'content-type': 'application/json',
        ...(status === 429 ? { 'retry-after': retryAfter } : {}),
      });
      res.end(status === 500 ? JSON.stringify({ detail: 'bad value' }) : JSON.stringify({ ok: true, path: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

function client(maxAttempts = 4, timeoutMs = 2000, realSleep = false) {
  const limiter = new PacedLimiter({ service: 'workflow', rate: null, concurrency: 4 });
  const ac = new AbortController();
  const target = { baseUrl: base, timeoutMs, limiter, connections: 4 };
  const c = createClient({
    clientId: 'cid',
    authToken: 'tok-secret-123',
    maxAttempts,
    signal: ac.signal,
    targets: { workflow: target, bureau: target, account: target },
    ...(realSleep ? {} : { sleep: async () => {} }),
  });
  return { c, limiter, ac };
}

describe('client chain: retry -> limit -> time-out -> auth -> transport', () => {
  it('429 (Retry-After), 503 and a reset are retried, every attempt through the limiter', async () => {
    script.set('/a', [429, 503, -1, 200]);
    const { c, limiter } = client();
    const res = await c.call('workflow', '/a', { x: 1 });
    expect(res.attempts).toBe(4);
    expect(limiter.stats().scheduled).toBe(4);
    expect(c.stats.workflow.throttled).toBe(1);
    expect(c.stats.workflow.retries).toBe(3);
    await c.close();
  });

  it('stops after --max-attempts with the last error and its attempt count', async () => {
    script.set('/b', [503, 503, 503]);
    const { c } = client(3);
    const err = (await c.call('workflow', '/b', {}).catch((e) => e)) as BreError;
    expect(err.code).toBe('SERVER_UNAVAILABLE');
    expect(err.attempts).toBe(3);
    await c.close();
  });

  it('a workflow 500 {detail} is a data error: no retry', async () => {
    script.set('/c', [500]);
    const { c, limiter } = client();
    const err = (await c.call('workflow', '/c', {}).catch((e) => e)) as BreError;
    expect(err.code).toBe('WORKFLOW_REJECTED_INPUT');
    expect(limiter.stats().scheduled).toBe(1);
    await c.close();
  });

  it('a hung call times out per attempt and is retried', async () => {
    script.set('/d', [0, 200]);
    const { c } = client(2, 300);
    const res = await c.call('workflow', '/d', {});
    expect(res.attempts).toBe(2);
    expect(c.stats.workflow.statuses.timeout).toBe(1);
    await c.close();
  });

  it('401 is not retried and the token is sent only as a header', async () => {
    script.set('/e', [401]);
    const { c } = client();
    const err = (await c.call('workflow', '/e', {}).catch((e) => e)) as BreError;
    expect(err.code).toBe('AUTH_REFUSED');
    expect(err.message).not.toContain('tok-secret-123');
    expect(seen.find((s) => s.path === '/e')?.token).toBe('tok-secret-123');
    await c.close();
  });

  it('a stopping run abandons queued attempts', async () => {
    script.set('/f', [200]);
    const { c, ac } = client();
    ac.abort();
    const err = (await c.call('workflow', '/f', {}).catch((e) => e)) as BreError;
    expect(err.code).toBe('INTERRUPTED');
    await c.close();
  });

  it('a 429 pauses the whole service for its Retry-After: calls queued meanwhile are not sent into the full window', async () => {
    script.set('/pause-a', [429, 200]);
    const { c, limiter } = client(4, 2000, true);
    const first = c.call('workflow', '/pause-a', {});
    await waitFor(() => limiter.pausedUntil > 0, 10_000, 'the 429 to pause the service');
    const pausedUntil = limiter.pausedUntil;
    // Retry-After: 1 s from when the 429 was answered.
    const refusedAt = seen.find((r) => r.path === '/pause-a')!.at;
    expect(pausedUntil).toBeGreaterThanOrEqual(refusedAt + 1000);
    const later = await Promise.all(['/pause-b', '/pause-c', '/pause-d'].map((p) => c.call('workflow', p, {})));
    // None of the calls queued during the pause reached the server before it ended.
    for (const p of ['/pause-b', '/pause-c', '/pause-d'])
      expect(seen.find((r) => r.path === p)!.at).toBeGreaterThanOrEqual(pausedUntil);
    expect(later.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect((await first).attempts).toBe(2);
    expect(c.stats.workflow.throttled).toBe(1);
    await c.close();
  });
});
