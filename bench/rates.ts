/**
 * Configured rates against a sandbox limited to the same rate (its strict sliding window, in its own process,
 * as `bre-batch sandbox --rate ...` runs it):
 * - `sweep`: workflow at 1/s, 100/s, 1,000/s and 5,000/s (target: >= 95% of each, 0 429s);
 * - `documented`: workflow at 500/min and bureau at 1000/min, 3 rounds of >= 150 s, the two services side by
 *   side in each round (target: >= 99.3%, 0 429s in every run).
 *
 * The achieved rate, two ways, both over the span from the first call to the last:
 * - `summary`: the run's summary.json `achieved_per_minute`: attempts less one over the time from the first
 *   attempt's start to the last one's, on the runner's clock;
 * - `server`: admitted requests less one over the time from the first admitted to the last, on the sandbox's
 *   clock (whole ms).
 * A first-to-last figure is honest only for a client that makes no burst at the start (a burst of `limit`
 * calls would be counted as if it were paced); this limiter makes none (src/limits/pacer.ts), and the
 * sandbox's `max_in_window` and `margin_ms` (its tightest span of limit+1 admitted requests, less the window:
 * what the whole path left over) say so from the server's side.
 * And a third, `steady`: the sandbox's admitted requests from STEADY_AFTER_MS into the run to its last, which
 * leaves out what a fresh process costs in its first second (connections, code compiled on first use): a
 * night's run pays that once, a 30 s benchmark run a few percent.
 */
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadRunSummary } from '@bre-batch/formats';
import type { Rate, ServiceStats } from '@bre-batch/sandbox';
import { describeRate } from '@bre-batch/core/rates';
import type { ServiceName } from '@bre-batch/core/types';
import { CLIENT_ID, ratio, runCli, startSandboxProcess, TOKEN, writeLocationCsv, writeRescoreCsv } from './harness.js';

export interface RateRun {
  readonly service: ServiceName;
  readonly rate: string;
  readonly rows: number;
  readonly exit: number | null;
  readonly seconds: number;
  readonly limit_per_s: number;
  readonly summary_per_s: number | null;
  readonly server_per_s: number | null;
  /** summary_per_s / limit_per_s. */
  readonly share: number | null;
  readonly server_share: number | null;
  /** The server's rate from STEADY_AFTER_MS into the run to the last call, as a share of the limit. */
  readonly steady_share: number | null;
  readonly sandbox_429: number;
  readonly max_in_window: number;
  /** The sandbox's tightest span of limit+1 admitted requests less the window, ms (null: too few calls). */
  readonly margin_ms: number | null;
}

const PIPELINE: Record<'workflow' | 'bureau', string> = { workflow: 'location', bureau: 'bureau_features' };
const STEADY_AFTER_MS = 3000;

async function serviceStats(url: string, service: ServiceName): Promise<ServiceStats> {
  const res = await fetch(`${url}/__sandbox/stats`);
  return ((await res.json()) as { services: Record<ServiceName, ServiceStats> }).services[service];
}

/** One run of about `seconds` at `rate` for `service`, against a sandbox of its own limited to the same rate. */
async function runAtRate(opts: {
  service: 'workflow' | 'bureau';
  rate: Rate;
  seconds: number;
  dir: string;
  tag: string;
}): Promise<RateRun> {
  const { service, rate } = opts;
  const text = describeRate(rate);
  const perSecond = (rate.limit * 1000) / rate.windowMs;
  const rows = Math.ceil(perSecond * opts.seconds) + 1;
  const sandbox = await startSandboxProcess([`${service}=${text}`]);
  const out = join(opts.dir, `rate-${opts.tag}`);
  let input: string;
  if (service === 'workflow') {
    input = join(opts.dir, `rate-${opts.tag}.csv`);
    await writeLocationCsv(input, rows);
  } else {
    input = writeRescoreCsv(rows, `RT${opts.tag}`);
  }
  try {
    const env = {
      BRE_BASE_URL: sandbox.url,
      BUREAU_BASE_URL: sandbox.url,
      ACCOUNT_BASE_URL: sandbox.url,
      BRE_CLIENT_ID: CLIENT_ID,
      BRE_AUTH_TOKEN: TOKEN,
    };
    let early: ServiceStats | null = null;
    const probe = setTimeout(
      () =>
        void serviceStats(sandbox.url, service).then(
          (s) => (early = s),
          () => undefined,
        ),
      STEADY_AFTER_MS,
    );
    const r = await runCli(
      ['run', PIPELINE[service], '--input', input, '--out', out, '--no-progress', '--rate', `${service}=${text}`],
      env,
    );
    clearTimeout(probe);
    const st = await serviceStats(sandbox.url, service);
    const from = early as ServiceStats | null;
    const steadyPerS =
      from && from.lastAdmittedAt !== null && st.lastAdmittedAt !== null && st.lastAdmittedAt > from.lastAdmittedAt
        ? ((st.admitted - from.admitted) * 1000) / (st.lastAdmittedAt - from.lastAdmittedAt)
        : null;
    const summary = r.code === 0 ? loadRunSummary(out) : undefined;
    const perMinute = summary?.services[service]?.achieved_per_minute ?? null;
    const summaryPerS = perMinute === null ? null : perMinute / 60;
    const serverPerS =
      st.firstAdmittedAt !== null && st.lastAdmittedAt !== null && st.lastAdmittedAt > st.firstAdmittedAt
        ? ((st.admitted - 1) * 1000) / (st.lastAdmittedAt - st.firstAdmittedAt)
        : null;
    return {
      service,
      rate: text,
      rows,
      exit: r.code,
      seconds: Math.round(r.seconds * 10) / 10,
      limit_per_s: perSecond,
      summary_per_s: summaryPerS === null ? null : Math.round(summaryPerS * 1000) / 1000,
      server_per_s: serverPerS === null ? null : Math.round(serverPerS * 1000) / 1000,
      share: summaryPerS === null ? null : ratio(summaryPerS, perSecond),
      server_share: serverPerS === null ? null : ratio(serverPerS, perSecond),
      steady_share: steadyPerS === null ? null : ratio(steadyPerS, perSecond),
      sandbox_429: st.throttled,
      max_in_window: st.maxInWindow,
      margin_ms: st.tightestSpanMs === null ? null : st.tightestSpanMs - rate.windowMs,
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
    rmSync(input, { force: true });
    rmSync(out, { recursive: true, force: true });
  }
}

/** `sweep`: each rate for about `seconds`, one after the other. */
export async function benchSweep(opts: { dir: string; seconds: number }): Promise<RateRun[]> {
  const runs: RateRun[] = [];
  for (const perSecond of [1, 100, 1000, 5000]) {
    // 1/s needs a while to be more than a handful of calls.
    const seconds = perSecond === 1 ? Math.max(opts.seconds, 20) : opts.seconds;
    runs.push(
      await runAtRate({
        service: 'workflow',
        rate: { limit: perSecond, windowMs: 1000 },
        seconds,
        dir: opts.dir,
        tag: `sweep-${perSecond}`,
      }),
    );
  }
  return runs;
}

/** `documented`: workflow 500/min and bureau 1000/min side by side, `rounds` times. */
export async function benchDocumented(opts: { dir: string; seconds: number; rounds: number }): Promise<RateRun[]> {
  const runs: RateRun[] = [];
  for (let i = 0; i < opts.rounds; i += 1) {
    runs.push(
      ...(await Promise.all([
        runAtRate({
          service: 'workflow',
          rate: { limit: 500, windowMs: 60_000 },
          seconds: opts.seconds,
          dir: opts.dir,
          tag: `doc-w${i}`,
        }),
        runAtRate({
          service: 'bureau',
          rate: { limit: 1000, windowMs: 60_000 },
          seconds: opts.seconds,
          dir: opts.dir,
          tag: `doc-b${i}`,
        }),
      ])),
    );
  }
  return runs;
}
