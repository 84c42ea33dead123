/**
 * `slow` (issue 32): a service that answers slowly keeps its limit. `run bureau_features` at the documented
 * 1000/min against a `bre-batch sandbox --rate bureau=1000/min --latency-ms L` (its own process, its strict
 * sliding window the referee), for answers of 1 s, 10 s, 20 s and 30 s, beside a control with answers at once
 * (the same run, so what a loaded machine costs shows apart from what slow answers cost); and, at 20 s, the same with
 * `--concurrency 167` (rate x 10 s, the bound before issue 32), which must say that --concurrency held it.
 *
 * The figure is the server's: requests it admitted less one over the time from the first admitted to the last
 * (the sandbox's clock), a share of the limit. A run's calls are sent over `seconds`; its answers come L later.
 * The 30 s case runs with `--timeout bureau=60s` (the spec's upper recommendation for batch use): at the
 * default 30 s every answer of 30 s would be cut.
 */
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadRunSummary } from '@bre-batch/formats';
import type { ServiceStats } from '@bre-batch/sandbox';
import { CLIENT_ID, ratio, runCli, startSandboxProcess, TOKEN, writeRescoreCsv } from './harness.js';

export interface SlowRun {
  readonly latency_s: number;
  readonly concurrency: string;
  readonly rows: number;
  readonly exit: number | null;
  readonly seconds: number;
  /** Admitted requests a second at the sandbox, first to last, as a share of 1000/min. */
  readonly server_share: number | null;
  readonly summary_per_minute: number | null;
  readonly sandbox_429: number;
  readonly max_in_window: number;
  /** summary.json: the mean latency the calls in flight were sized for, and what it said of --concurrency. */
  readonly latency_mean_ms: number | null;
  readonly concurrency_held_ms: number | null;
  readonly concurrency_note: string | null;
}

const LIMIT_PER_S = 1000 / 60;

async function bureauStats(url: string): Promise<ServiceStats> {
  const res = await fetch(`${url}/__sandbox/stats`);
  return ((await res.json()) as { services: { bureau: ServiceStats } }).services.bureau;
}

async function runSlow(opts: {
  dir: string;
  latencyS: number;
  seconds: number;
  concurrency?: number;
  tag: string;
}): Promise<SlowRun> {
  const rows = Math.ceil(LIMIT_PER_S * opts.seconds) + 1;
  const sandbox = await startSandboxProcess(['bureau=1000/min'], ['--latency-ms', String(opts.latencyS * 1000)]);
  const input = writeRescoreCsv(rows, `SLOW${opts.tag}`);
  const out = join(opts.dir, `slow-${opts.tag}`);
  try {
    const env = {
      BRE_BASE_URL: sandbox.url,
      BUREAU_BASE_URL: sandbox.url,
      ACCOUNT_BASE_URL: sandbox.url,
      BRE_CLIENT_ID: CLIENT_ID,
      BRE_AUTH_TOKEN: TOKEN,
    };
    const args = [
      'run',
      'bureau_features',
      '--input',
      input,
      '--out',
      out,
      '--no-progress',
      '--rate',
      'bureau=1000/min',
    ];
    if (opts.latencyS >= 30) args.push('--timeout', 'bureau=60s');
    if (opts.concurrency !== undefined) args.push('--concurrency', String(opts.concurrency));
    const r = await runCli(args, env);
    const st = await bureauStats(sandbox.url);
    const serverPerS =
      st.firstAdmittedAt !== null && st.lastAdmittedAt !== null && st.lastAdmittedAt > st.firstAdmittedAt
        ? ((st.admitted - 1) * 1000) / (st.lastAdmittedAt - st.firstAdmittedAt)
        : null;
    const svc = r.code === 0 ? loadRunSummary(out).services.bureau : undefined;
    return {
      latency_s: opts.latencyS,
      concurrency: opts.concurrency === undefined ? 'default' : String(opts.concurrency),
      rows,
      exit: r.code,
      seconds: Math.round(r.seconds * 10) / 10,
      server_share: serverPerS === null ? null : ratio(serverPerS, LIMIT_PER_S),
      summary_per_minute: svc?.achieved_per_minute ?? null,
      sandbox_429: st.throttled,
      max_in_window: st.maxInWindow,
      latency_mean_ms: svc?.latency_mean_ms ?? null,
      concurrency_held_ms: svc?.concurrency_held_ms ?? null,
      concurrency_note: svc?.concurrency_note ?? null,
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    rmSync(input, { force: true });
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Answers at once (the control: what the machine allows now, a shared machine's load included), then of 1, 10, 20
 * and 30 s at the default bound, then 20 s at the old one (rate x 10 s = 167).
 */
export async function benchSlow(opts: { dir: string; seconds: number }): Promise<SlowRun[]> {
  const runs: SlowRun[] = [];
  for (const latencyS of [0, 1, 10, 20, 30])
    runs.push(await runSlow({ dir: opts.dir, latencyS, seconds: opts.seconds, tag: `l${latencyS}` }));
  runs.push(await runSlow({ dir: opts.dir, latencyS: 20, seconds: opts.seconds, concurrency: 167, tag: 'l20c167' }));
  return runs;
}
