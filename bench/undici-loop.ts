/**
 * The floor of an undici-based client: a bare loop of calls (64 in flight, body read whole and parsed, nothing
 * else), run as its own process by the raw benchmark to show how much of autocannon's rate the HTTP client
 * alone leaves for the runner. Two loops:
 * - `request`: undici's `Pool.request()`, body read with `body.text()`;
 * - `transport`: the runner's own bottom layer (src/http/transport.ts: `Pool.dispatch()` with a handler that
 *   collects the body), so "runner vs bare loop" measures the runner above its transport.
 *
 *   node --import tsx bench/undici-loop.ts <request|transport> <url> <path> <client id> <token> <body json> <requests>
 *
 * The transport is the shipped build's (dist/), the code the runner runs.
 */
import { Pool } from 'undici';
import { shippedModule } from './harness.js';

const { Transport } = (await import(shippedModule('http/transport.js'))) as typeof import('../src/http/transport.js');

const [mode, url, path, clientId, token, body, count] = process.argv.slice(2);
if (mode !== 'request' && mode !== 'transport') throw new Error(`Expected the loop request or transport, got ${mode}`);
const headers = { 'content-type': 'application/json', 'x-client-id': clientId, 'x-auth-token': token };
const total = Number(count);
const pool = new Pool(url, { connections: 64, pipelining: 1 });
const transport = new Transport(url, 64);
let sent = 0;

async function viaRequest(): Promise<string> {
  const res = await pool.request({ method: 'POST', path, headers, body });
  return res.body.text();
}

async function viaTransport(): Promise<string> {
  return (await transport.send('workflow', { path, headers, body }, 30_000)).text;
}

const call = mode === 'request' ? viaRequest : viaTransport;
async function worker(): Promise<void> {
  while (sent < total) {
    sent += 1;
    JSON.parse(await call());
  }
}

const t0 = performance.now();
await Promise.all(Array.from({ length: 64 }, worker));
process.stdout.write(`${Math.round(total / ((performance.now() - t0) / 1000))}\n`);
await Promise.all([pool.close(), transport.close()]);
