/**
 * Redis for the shared-limiter tests: the local server at 127.0.0.1:6379 (CI starts one in .ci/run), and
 * private servers on spare ports for tests that stop and restart Redis. Without a Redis the tests are
 * skipped with a message saying so; under CI=true they fail instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import type { it } from 'vitest';
import { gatedIt } from './gate.js';
import { sleep } from './wait.js';

export const REDIS_URL = process.env.BRE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function pingRedis(url = REDIS_URL, timeoutMs = 1000): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = createConnection({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** `it` when a Redis answers; under CI=true without Redis, a test that fails saying so; else `it.skip`. */
export const itRedis: typeof it = gatedIt(
  await pingRedis(),
  `no Redis answers at ${REDIS_URL}: the shared-limiter (--redis) tests did not run`,
  'start redis-server (npm test as root starts it) or set BRE_TEST_REDIS_URL',
);

/** How long the tests keep a killed Redis down: the length of the outage is the scenario, not a guess. */
export const REDIS_OUTAGE_MS = 1500;

export async function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** A private redis-server (no persistence) on `port`, as a child process we can kill and restart. */
export class OwnRedis {
  #child: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.#child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i += 1) {
      if (await pingRedis(this.url, 200)) return;
      await sleep(50);
    }
    throw new Error(`redis-server did not start on port ${this.port}`);
  }

  /** SIGKILL: like a crash, nothing saved (and nothing to save). */
  async kill(): Promise<void> {
    const c = this.#child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }
}
