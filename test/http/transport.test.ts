import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport } from '../../src/http/transport.js';
import type { BreError } from '@bre-batch/core/errors';
import { waitFor } from '../helpers/wait.js';

let server: Server;
let base = '';
let connections = 0;
/** Requests the server has received, by path. */
const received = new Map<string, number>();
/** Body bytes the /trickle route has sent; answers /hold keeps until the test ends them. */
let trickled = 0;
const held: import('node:http').ServerResponse[] = [];
const BIG = JSON.stringify({ rows: Array.from({ length: 5000 }, (_, i) => ({ i, text: 'é'.repeat(20) })) });

beforeAll(async () => {
  server = createServer((req, res) => {
    received.set(req.url ?? '', (received.get(req.url ?? '') ?? 0) + 1);
    req.resume();
    req.on('end', () => {
      if (req.url === '/length') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BIG) });
        res.end(BIG);
      } else if (req.url === '/chunked') {
        // No content-length: the capped streaming reader. Split inside a multi-byte character on purpose.
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        const buf = Buffer.from(BIG);
        const cut = buf.indexOf(Buffer.from('é')) + 1;
        res.write(buf.subarray(0, cut));
        setTimeout(() => res.end(buf.subarray(cut)), 5);
      } else if (req.url === '/short') {
        // Declares more than it sends, then hangs up: a body cut short in transit.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
        res.write('{"partial":');
        setTimeout(() => req.socket.destroy(), 5);
      } else if (req.url === '/hang') {
        // Headers never come: the per-attempt time-out.
      } else if (req.url === '/stall') {
        // Headers, then a body that stops half-way.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
        res.write('{"partial":');
      } else if (req.url === '/trickle') {
        // Headers at once, then the body one byte every 20 ms: never silent for long, never finished.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100_000 });
        const timer = setInterval(() => {
          trickled += 1;
          res.write('x');
        }, 20);
        res.on('close', () => clearInterval(timer));
      } else if (req.url === '/hold') {
        held.push(res);
      } else if (req.url === '/throttled') {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'x-multi': ['a', 'b'] });
        res.end('{"detail":"slow down"}');
      } else {
        res.writeHead(200, { 'content-length': 0 });
        res.end();
      }
    });
  });
  server.on('connection', () => (connections += 1));
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

describe('transport: every body read whole, whichever way it is framed', () => {
  it.each([['/length'], ['/chunked']])('%s: the whole body, decoded once as UTF-8', async (path) => {
    const t = new Transport(base, 2);
    const res = await t.send('workflow', { path, headers: {}, body: '{}' }, 2000);
    expect(res.status).toBe(200);
    expect(res.text).toBe(BIG);
    await t.close();
  });

  it("keeps connections alive: 20 calls one after another reuse the pool's connections", async () => {
    const t = new Transport(base, 4);
    const before = connections;
    for (let i = 0; i < 20; i += 1)
      expect((await t.send('workflow', { path: '/length', headers: {}, body: '{}' }, 2000)).text).toBe(BIG);
    // A connection per call would be 20. The answer settles as its last byte is parsed, a moment before undici
    // marks the connection free, so the next call may open a second one (never more than the pool's 4).
    expect(connections - before).toBeGreaterThanOrEqual(1);
    expect(connections - before).toBeLessThanOrEqual(2);
    await t.close();
  });

  it('an empty body is the empty string', async () => {
    const t = new Transport(base, 2);
    expect((await t.send('workflow', { path: '/empty', headers: {}, body: '{}' }, 2000)).text).toBe('');
    await t.close();
  });

  it('status and headers come through: lower-case names, repeated headers as arrays', async () => {
    const t = new Transport(base, 2);
    const res = await t.send('workflow', { path: '/throttled', headers: {}, body: '{}' }, 2000);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.headers['x-multi']).toEqual(['a', 'b']);
    expect(res.text).toBe('{"detail":"slow down"}');
    await t.close();
  });

  it.each([
    ['/length', 'declared'],
    ['/chunked', 'cut after'],
  ])(
    '%s: an answer over the cap is cut as it streams: RESPONSE_TOO_LARGE with the size and the status',
    async (path, how) => {
      const t = new Transport(base, 2, 1000);
      const err = (await t.send('workflow', { path, headers: {}, body: '{}' }, 2000).catch((e) => e)) as BreError;
      expect(err.code).toBe('RESPONSE_TOO_LARGE');
      expect(err.status).toBe(200);
      expect(err.message).toContain('--max-response-size 1000');
      expect(err.message).toContain(how);
      // The connection was dropped, not left holding the rest: the pool still answers the next call.
      const next = await t.send('workflow', { path: '/empty', headers: {}, body: '{}' }, 2000);
      expect([next.status, next.text]).toEqual([200, '']);
      await t.close();
    },
  );

  it.each([['/hang'], ['/stall']])(
    '%s: no answer (or a body that stalls) within the time-out is TIMEOUT',
    async (path) => {
      // The server never answers in full: without the time-out this call would never settle.
      const t = new Transport(base, 2);
      const err = (await t.send('bureau', { path, headers: {}, body: '{}' }, 150).catch((e) => e)) as BreError;
      expect(err.code).toBe('TIMEOUT');
      expect(err.service).toBe('bureau');
      expect(err.message).toContain('150 ms');
      await t.destroy();
    },
  );

  it('a body trickled a byte at a time is cut at the time-out: it bounds the whole attempt, not the silence between bytes', async () => {
    const t = new Transport(base, 2);
    const before = trickled;
    const err = (await t
      .send('bureau', { path: '/trickle', headers: {}, body: '{}' }, 400)
      .catch((e) => e)) as BreError;
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toContain('400 ms');
    // the server had answered the headers and was sending the body when the attempt was cut
    expect(trickled - before).toBeGreaterThan(0);
    await t.close();
  });

  it('an attempt still waiting for a connection at its deadline is cut, and its request is never written', async () => {
    const t = new Transport(base, 1);
    const first = t.send('workflow', { path: '/hold', headers: {}, body: '{}' }, 60_000);
    await waitFor(() => held.length > 0, 10_000, 'the first call to reach the server');
    let written = false;
    const err = (await t
      .send('workflow', { path: '/never', headers: {}, body: '{}' }, 100, undefined, () => (written = true))
      .catch((e) => e)) as BreError;
    expect(err.code).toBe('TIMEOUT');
    held.shift()!.end('{}');
    expect((await first).text).toBe('{}');
    // The pool is first in, first out: once a later call is answered, the cut one has had its turn.
    expect((await t.send('workflow', { path: '/empty', headers: {}, body: '{}' }, 2000)).status).toBe(200);
    expect(received.get('/never') ?? 0).toBe(0);
    expect(written).toBe(false);
    await t.close();
  });

  it('calls in flight fail at once when the pool is destroyed (a run abandoning its calls)', async () => {
    const t = new Transport(base, 2);
    const stop = new AbortController();
    const before = received.get('/hang') ?? 0;
    const pending = t.send('account', { path: '/hang', headers: {}, body: '{}' }, 600_000, stop.signal).catch((e) => e);
    await waitFor(() => (received.get('/hang') ?? 0) > before, 10_000, 'the call to reach the server');
    stop.abort();
    await t.destroy();
    const err = (await pending) as BreError;
    expect(err.code).toBe('INTERRUPTED');
  });

  it('a body cut short of its content-length is a NETWORK error (retried by the chain), not a short answer', async () => {
    const t = new Transport(base, 2);
    const err = (await t
      .send('workflow', { path: '/short', headers: {}, body: '{}' }, 2000)
      .catch((e) => e)) as BreError;
    expect(err.code).toBe('NETWORK');
    expect(err.service).toBe('workflow');
    await t.close();
  });
});
