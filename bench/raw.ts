/**
 * With rate limits off (the sandbox as a back-testing target), the runner's rows/s on a one-stage pipeline
 * against what a raw HTTP load generator (autocannon, in its own process) gets from the same endpoint.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { loadRunSummary } from '@bre-batch/formats';
import { startSandbox } from '@bre-batch/sandbox';
import { rowCost } from './breakdown.js';
import { benchScriptArgs, ratio, runCli, writeLocationCsv } from './harness.js';

async function autocannon(
  url: string,
  headers: Record<string, string>,
  body: string,
  seconds: number,
  connections: number,
): Promise<number> {
  const bin = join(PACKAGE_ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const hs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
  const child = spawn(
    process.execPath,
    [bin, '-m', 'POST', ...hs, '-b', body, '-c', String(connections), '-d', String(seconds), '-j', url],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await once(child, 'exit');
  const res = JSON.parse(out) as { requests: { average: number }; non2xx: number; errors: number };
  if (res.non2xx > 0 || res.errors > 0)
    throw new Error(`autocannon saw ${res.non2xx} non-2xx and ${res.errors} errors`);
  return res.requests.average;
}

/**
 * `latencyMs` 0: both sides are CPU-bound on this 2-core machine (the sandbox on one core, the client on the
 * other), so the figure compares per-request client cost. A real back-testing target answers in tens of ms;
 * there the comparison is about keeping enough calls in flight (both use 64).
 */
async function undiciLoop(
  mode: 'request' | 'transport',
  url: string,
  path: string,
  clientId: string,
  token: string,
  body: string,
  requests: number,
): Promise<number> {
  const child = spawn(
    process.execPath,
    benchScriptArgs('undici-loop.ts', [mode, url, path, clientId, token, body, String(requests)]),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await once(child, 'exit');
  return Number(out.trim());
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * `rounds` rounds of autocannon, the two bare undici loops (./undici-loop.ts) and the runner, back to back, each round giving its own
 * ratio. This machine is shared: the same code swings by a third from one minute to the next, so a ratio is
 * only meaningful between measurements taken moments apart, and the median round is the figure.
 */
export async function benchRawVsAutocannon(opts: {
  dir: string;
  rows: number;
  seconds: number;
  latencyMs?: number;
  rounds?: number;
  /** After the rounds, the runner and the bare transport loop profiled once each: what a row costs by part. */
  breakdown?: boolean;
  /**
   * Another checkout, built: its runner runs the same command in each round, before this build's in odd rounds
   * and after it in even ones, so that a before/after is taken in turn against the same sandbox.
   */
  against?: string;
}): Promise<Record<string, unknown>> {
  const sb = await startSandbox({
    rate: { workflow: null, bureau: null, account: null },
    latencyMs: opts.latencyMs ?? 0,
  });
  try {
    const headers = { 'content-type': 'application/json', 'x-client-id': sb.clientId, 'x-auth-token': sb.authToken };
    const body = JSON.stringify({
      user_id: 'u1',
      reference_id: 'r1',
      input_data: { lead_id: 'l1', latitude: 19.076, longitude: 72.8777 },
    });
    const input = join(opts.dir, `raw-${opts.rows}.csv`);
    // The runner's rows ask what autocannon and the bare loops ask (only the ids differ): the figure compares
    // the clients, and the sandbox's work differs with the place (rows spread over India cost it about a tenth
    // more a request than this one: three alternated pairs of 100,000 rows, 2026-11-23).
    await writeLocationCsv(input, opts.rows, { latitude: '19.076', longitude: '72.8777' });
    const env = { BRE_BASE_URL: sb.url, BRE_CLIENT_ID: sb.clientId, BRE_AUTH_TOKEN: sb.authToken };
    const rounds: {
      autocannon: number;
      bare_request: number;
      bare_transport: number;
      runner: number;
      ratio: number;
      bare_request_ratio: number;
      bare_transport_ratio: number;
      runner_vs_transport: number;
      against_runner?: number;
      /** This build's rows/s over the other checkout's, in the same round. */
      vs_against?: number;
      exit: number | null;
    }[] = [];
    const path = `/execute/${sb.clientId}/location_bre`;
    for (let i = 0; i < (opts.rounds ?? 3); i += 1) {
      const raw = await autocannon(`${sb.url}${path}`, headers, body, opts.seconds, 64);
      const bareRequest = await undiciLoop('request', sb.url, path, sb.clientId, sb.authToken, body, opts.rows);
      const bareTransport = await undiciLoop('transport', sb.url, path, sb.clientId, sb.authToken, body, opts.rows);
      // BENCH_RAW_ARGS: more options for the runner (e.g. `--price workflow=0.05`: the raw path with spend counted).
      const more = (process.env.BENCH_RAW_ARGS ?? '').split(' ').filter((a) => a !== '');
      const runOnce = async (tag: string, cli: string | undefined, extra: readonly string[]) => {
        const out = join(opts.dir, `raw-out-${opts.latencyMs ?? 0}-${i}${tag}`);
        const args = ['run', 'location', '--input', input, '--out', out, '--rate', 'off', '--concurrency', '64'];
        const r = await runCli([...args, '--no-progress', ...extra], env, undefined, cli);
        return { code: r.code, rowsPerS: loadRunSummary(out).rows_per_second ?? 0 };
      };
      const theirs = opts.against ? join(opts.against, 'bin', 'bre-batch.js') : undefined;
      const before = theirs && i % 2 === 1 ? await runOnce('-against', theirs, []) : undefined;
      const ours = await runOnce('', undefined, more);
      const after = theirs && i % 2 === 0 ? await runOnce('-against', theirs, []) : undefined;
      const against = before ?? after;
      const r = { code: against && against.code !== 0 ? against.code : ours.code };
      const runner = ours.rowsPerS;
      rounds.push({
        autocannon: Math.round(raw),
        bare_request: bareRequest,
        bare_transport: bareTransport,
        runner: Math.round(runner),
        ratio: ratio(runner, raw),
        bare_request_ratio: ratio(bareRequest, raw),
        bare_transport_ratio: ratio(bareTransport, raw),
        runner_vs_transport: ratio(runner, bareTransport),
        ...(against
          ? { against_runner: Math.round(against.rowsPerS), vs_against: ratio(runner, against.rowsPerS) }
          : {}),
        exit: r.code,
      });
    }
    const breakdown = opts.breakdown
      ? await rowCost({
          dir: opts.dir,
          input,
          rows: opts.rows,
          env,
          url: sb.url,
          path,
          clientId: sb.clientId,
          token: sb.authToken,
          body,
          against: opts.against,
          extra: (process.env.BENCH_RAW_ARGS ?? '').split(' ').filter((a) => a !== ''),
        })
      : undefined;
    return {
      ...(breakdown ? { breakdown } : {}),
      sandbox_latency_ms: opts.latencyMs ?? 0,
      rows: opts.rows,
      autocannon_requests_per_s: median(rounds.map((r) => r.autocannon)),
      bare_request_loop_per_s: median(rounds.map((r) => r.bare_request)),
      bare_transport_loop_per_s: median(rounds.map((r) => r.bare_transport)),
      runner_rows_per_s: median(rounds.map((r) => r.runner)),
      bare_request_ratio: median(rounds.map((r) => r.bare_request_ratio)),
      bare_transport_ratio: median(rounds.map((r) => r.bare_transport_ratio)),
      runner_vs_transport: median(rounds.map((r) => r.runner_vs_transport)),
      ...(opts.against
        ? {
            against: opts.against,
            against_runner_rows_per_s: median(rounds.map((r) => r.against_runner ?? 0)),
            vs_against: median(rounds.map((r) => r.vs_against ?? 0)),
            vs_against_range: [
              Math.min(...rounds.map((r) => r.vs_against ?? 0)),
              Math.max(...rounds.map((r) => r.vs_against ?? 0)),
            ],
          }
        : {}),
      ratio: median(rounds.map((r) => r.ratio)),
      ratio_range: [Math.min(...rounds.map((r) => r.ratio)), Math.max(...rounds.map((r) => r.ratio))],
      rounds,
      exit: rounds.every((r) => r.exit === 0) ? 0 : (rounds.find((r) => r.exit !== 0)?.exit ?? null),
    };
  } finally {
    await sb.close();
  }
}
