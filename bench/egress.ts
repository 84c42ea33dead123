/**
 * `egress` (issue 17): the same input at a strict 10/s per caller address (`bre-batch sandbox --rate
 * workflow=10/s`, in its own process, a fresh one per run), from one source address and from three
 * (127.0.0.2-4: Linux routes all of 127.0.0.0/8 to loopback). Reported: rows a second of each (summary.json,
 * first row dispatched to last settled), their ratio (target >= 2.85x), the sandbox's 429s (target 0) and,
 * from the sandbox's own counts per caller, the most requests it admitted from each address inside one
 * sliding window (never above 10).
 *
 * Each fresh sandbox is warmed first by calls from addresses the runs do not use (127.0.0.9-12, windows of
 * their own): a cold sandbox process stalls about 100 ms on its first requests (its code not yet compiled),
 * and the first calls of the other addresses, which arrive meanwhile, are counted 100 ms late: a first
 * window shorter than the one the client kept, one 429 per address. A service in production is warm.
 */
import { once } from 'node:events';
import { Client } from 'undici';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadRunSummary } from '@bre-batch/formats';
import type { SandboxStats } from '@bre-batch/sandbox';
import { CLIENT_ID, ratio, runCli, startSandboxProcess, TOKEN, writeLocationCsv } from './harness.js';

const PER_SECOND = 10;
const THREE = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const WARMERS = ['127.0.0.9', '127.0.0.10', '127.0.0.11', '127.0.0.12'];

/** PER_SECOND - 1 workflow calls from each warming address, one after the other (none refused). */
async function warm(url: string): Promise<void> {
  const body = JSON.stringify({
    user_id: 'u',
    reference_id: 'r',
    input_data: { lead_id: 'l', latitude: 12.97, longitude: 77.59 },
  });
  for (const localAddress of WARMERS) {
    const client = new Client(url, { localAddress });
    try {
      for (let i = 0; i < PER_SECOND - 1; i += 1) {
        const res = await client.request({
          method: 'POST',
          path: `/execute/${CLIENT_ID}/location_bre`,
          headers: { 'x-client-id': CLIENT_ID, 'x-auth-token': TOKEN, 'content-type': 'application/json' },
          body,
        });
        await res.body.text();
      }
    } finally {
      await client.close();
    }
  }
}

interface EgressRun {
  readonly addresses: readonly string[];
  readonly rows: number;
  readonly exit: number | null;
  readonly rows_per_s: number | null;
  /** 429s the sandbox answered to the run's addresses. */
  readonly sandbox_429: number;
  /** Address -> most admitted inside one 1 s window, and admitted in all. */
  readonly per_address: Readonly<Record<string, { max_in_window: number; admitted: number }>>;
}

export interface EgressFigures {
  readonly limit_per_address: string;
  readonly one: EgressRun;
  readonly three: EgressRun;
  /** three.rows_per_s / one.rows_per_s. */
  readonly ratio: number | null;
}

async function runFrom(addresses: readonly string[], input: string, rows: number, out: string): Promise<EgressRun> {
  const sandbox = await startSandboxProcess([`workflow=${PER_SECOND}/s`]);
  try {
    await warm(sandbox.url);
    const env = {
      BRE_BASE_URL: sandbox.url,
      BUREAU_BASE_URL: sandbox.url,
      ACCOUNT_BASE_URL: sandbox.url,
      BRE_CLIENT_ID: CLIENT_ID,
      BRE_AUTH_TOKEN: TOKEN,
    };
    const r = await runCli(
      [
        'run',
        'location',
        '--input',
        input,
        '--out',
        out,
        '--no-progress',
        '--rate',
        `workflow=${PER_SECOND}/s`,
        '--local-address',
        addresses.join(','),
      ],
      env,
    );
    if (r.code !== 0) throw new Error(`run from ${addresses.join(',')} exited ${r.code}: ${r.stderr.slice(-1500)}`);
    const st = ((await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as SandboxStats).services.workflow;
    const mine = addresses.map((a) => [a, st.callers[a]] as const);
    return {
      addresses,
      rows,
      exit: r.code,
      rows_per_s: loadRunSummary(out).rows_per_second,
      sandbox_429: mine.reduce((n, [, c]) => n + (c?.throttled ?? 0), 0),
      per_address: Object.fromEntries(
        mine.map(([a, c]) => [a, { max_in_window: c?.maxInWindow ?? 0, admitted: c?.admitted ?? 0 }]),
      ),
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    rmSync(out, { recursive: true, force: true });
  }
}

/** `rowsPerAddress` rows for each of the three addresses (300: about 30 s from three, 90 s from one). */
export async function benchEgress(opts: { dir: string; rowsPerAddress: number }): Promise<EgressFigures> {
  const rows = opts.rowsPerAddress * THREE.length;
  const input = join(opts.dir, 'egress.csv');
  await writeLocationCsv(input, rows);
  try {
    const one = await runFrom(THREE.slice(0, 1), input, rows, join(opts.dir, 'egress-1'));
    const three = await runFrom(THREE, input, rows, join(opts.dir, 'egress-3'));
    return {
      limit_per_address: `workflow ${PER_SECOND}/s`,
      one,
      three,
      ratio: one.rows_per_s && three.rows_per_s ? ratio(three.rows_per_s, one.rows_per_s) : null,
    };
  } finally {
    rmSync(input, { force: true });
  }
}
