/**
 * The real Pushgateway (Debian's prometheus-pushgateway, installed by .ci/run when missing), started on a
 * free loopback port with its own storage, and read back through its /metrics as Prometheus would scrape it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { tempDir } from './temp.js';
import { waitFor } from './wait.js';

const PUSHGATEWAY_BIN = process.env.BRE_TEST_PUSHGATEWAY ?? '/usr/bin/prometheus-pushgateway';

type Family = { name: string; metrics: { value: string; labels?: Record<string, string> }[] };

export interface TestPushgateway {
  readonly url: string;
  /** The samples of `name` whose labels include `labels`, as the gateway exposes them. */
  samples(name: string, labels?: Record<string, string>): Promise<{ value: number; labels: Record<string, string> }[]>;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the kernel's choice; taken by the caller at once). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export async function startPushgateway(): Promise<TestPushgateway> {
  const dir = tempDir('bre-pushgw-');
  const port = await freePort();
  const child: ChildProcess = spawn(
    PUSHGATEWAY_BIN,
    [`--web.listen-address=127.0.0.1:${port}`, `--persistence.file=${join(dir, 'pushgateway.data')}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    log += d;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus-pushgateway exited: ${log}`);
      return fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
    'the Pushgateway to be ready',
  );
  return {
    url,
    async samples(name, labels = {}) {
      const text = await (await fetch(`${url}/metrics`)).text();
      const fam = (parsePrometheusTextFormat(text) as Family[]).find((f) => f.name === name);
      return (fam?.metrics ?? [])
        .filter((m) => Object.entries(labels).every(([k, v]) => (m.labels?.[k] ?? '') === v))
        .map((m) => ({ value: Number(m.value), labels: m.labels ?? {} }));
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
