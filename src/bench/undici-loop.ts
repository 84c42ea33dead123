/**
 * The floor of any undici-based client: a bare loop of `Pool.request()` calls (64 in flight, body read and
 * parsed, nothing else), run as its own process by the raw benchmark to show how much of autocannon's rate
 * the HTTP client alone leaves for the runner.
 *
 *   node dist/bench/undici-loop.js <url> <path> <client id> <token> <body json> <requests>
 */
import { Pool } from 'undici';

const [url, path, clientId, token, body, count] = process.argv.slice(2);
const pool = new Pool(url, { connections: 64, pipelining: 1 });
const headers = { 'content-type': 'application/json', 'x-client-id': clientId, 'x-auth-token': token };
const total = Number(count);
let sent = 0;

async function worker(): Promise<void> {
  while (sent < total) {
    sent += 1;
    const res = await pool.request({ method: 'POST', path, headers, body });
    JSON.parse(await res.body.text());
  }
}

const t0 = performance.now();
await Promise.all(Array.from({ length: 64 }, worker));
process.stdout.write(`${Math.round(total / ((performance.now() - t0) / 1000))}\n`);
await pool.close();
