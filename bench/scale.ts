/**
 * Memory and time at scale (issue 6, point 4; issue 16: the wait after the last answer, which each run
 * reports as end_of_run.last_answer_at in summary.json): the `location` pipeline over 100,000 and 1,000,000 rows with
 * rate limits off, against a sandbox in ANOTHER process (`bre-batch sandbox --rate off`), so the runner's
 * memory is measured alone. The figure that matters is the ratio of peak RSS between the two sizes: flat
 * (about 1) means memory does not grow with the input. Also rows/s, RSS over the run (sampled), and what
 * `run --plan` says the same input needs at the documented limits.
 *
 * Peak RSS: VmHWM of /proc/<pid>/status, polled every 100 ms while the runner lives (Linux); when the runner
 * prints `maxRSS <n> kB` on stderr at exit (env BRE_REPORT_RSS=1), that exact figure wins.
 *
 * With `format: 'parquet'` the same rows are a Parquet file (row groups of 100,000, as hyparquet-writer and
 * most warehouses write them): the reader holds one row group, so peak RSS must stay flat from 100k rows
 * (one row group) to 1M (ten); issue 12 asks for at most 1.25x.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { computePlan, formatDuration } from '../src/pipeline/plan.js';
import { loadPipeline } from '../src/config/pipeline.js';
import { DEFAULT_RATES } from '@bre-batch/core/rates';
import { readRunSummary } from '@bre-batch/formats';
import {
  CLI,
  CLIENT_ID,
  ratio,
  startSandboxProcess,
  TOKEN,
  writeLocationCsv,
  writeLocationParquet,
} from './harness.js';

interface ScaleRun {
  readonly rows: number;
  readonly exit: number | null;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly peakRssMb: number | null;
  /** RSS (MB) at 25%, 50%, 75% and 100% of the run's samples: flat while rows stream through. */
  readonly rssProfileMb: readonly number[];
  /** Where peak RSS came from. */
  readonly rssSource: 'maxRSS' | '/proc VmHWM' | 'unavailable';
  readonly succeeded: number | null;
  /** Time the same input needs at the documented limits from one IP (run --plan). */
  readonly atDocumentedLimits: string;
  /**
   * From the last answer to the process's exit (results.csv and .parquet, errors.parquet, summary and
   * report.html written), in seconds, and per million rows (issue 16: <= 5 s per million).
   */
  readonly lastAnswerToExitSeconds: number | null;
  readonly lastAnswerToExitPerMillion: number | null;
}

export interface ScaleResult {
  readonly runs: readonly ScaleRun[];
  /** Peak RSS of the largest input over the smallest's: ~1 is flat. */
  readonly rssRatio: number | null;
  readonly rowsRatio: number;
}

function procStatus(pid: number): { hwmKb: number; rssKb: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(text);
    const rss = /VmRSS:\s+(\d+) kB/.exec(text);
    return hwm && rss ? { hwmKb: Number(hwm[1]), rssKb: Number(rss[1]) } : undefined;
  } catch {
    return undefined;
  }
}

export type ScaleFormat = 'csv' | 'parquet';

async function runOnce(rows: number, dir: string, url: string, format: ScaleFormat): Promise<ScaleRun> {
  const input = join(dir, `scale-${rows}.${format}`);
  const out = join(dir, `scale-${rows}-${format}-out`);
  rmSync(out, { recursive: true, force: true });
  if (format === 'parquet') await writeLocationParquet(input, rows);
  else await writeLocationCsv(input, rows);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [CLI, 'run', 'location', '--input', input, '--out', out, '--rate', 'off', '--no-progress'],
    {
      env: {
        ...process.env,
        BRE_BASE_URL: url,
        BUREAU_BASE_URL: url,
        ACCOUNT_BASE_URL: url,
        BRE_CLIENT_ID: CLIENT_ID,
        BRE_AUTH_TOKEN: TOKEN,
        BRE_REPORT_RSS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  let hwmKb = 0;
  const samples: number[] = [];
  const poll = setInterval(() => {
    const st = child.pid ? procStatus(child.pid) : undefined;
    if (!st) return;
    hwmKb = Math.max(hwmKb, st.hwmKb);
    samples.push(st.rssKb);
  }, 100);
  const [code] = (await once(child, 'exit')) as [number | null];
  const exitedAt = Date.now();
  clearInterval(poll);
  const seconds = (performance.now() - t0) / 1000;
  const reported = /maxRSS (\d+) kB/.exec(stderr);
  const peakKb = reported ? Number(reported[1]) : hwmKb || null;
  const read = readRunSummary(out);
  const summary = read.state === 'ok' ? read.value : undefined;
  const lastAnswer = summary?.end_of_run?.last_answer_at ? Date.parse(summary.end_of_run.last_answer_at) : NaN;
  const tail = Number.isFinite(lastAnswer) ? (exitedAt - lastAnswer) / 1000 : null;
  const at = (q: number) =>
    samples.length ? Math.round(samples[Math.min(samples.length - 1, Math.floor(q * (samples.length - 1)))] / 1024) : 0;
  const plan = computePlan(rows, loadPipeline('location').stages, DEFAULT_RATES);
  rmSync(input, { force: true });
  rmSync(out, { recursive: true, force: true });
  return {
    rows,
    exit: code,
    seconds: Math.round(seconds * 10) / 10,
    rowsPerSecond: Math.round(rows / seconds),
    peakRssMb: peakKb === null ? null : Math.round(peakKb / 1024),
    rssProfileMb: samples.length ? [at(0.25), at(0.5), at(0.75), at(1)] : [],
    rssSource: reported ? 'maxRSS' : hwmKb ? '/proc VmHWM' : 'unavailable',
    succeeded: summary?.rows.succeeded ?? null,
    atDocumentedLimits: plan.wallMs === null ? 'unlimited' : formatDuration(plan.wallMs),
    lastAnswerToExitSeconds: tail === null ? null : Math.round(tail * 100) / 100,
    lastAnswerToExitPerMillion: tail === null ? null : Math.round(((tail * 1e6) / rows) * 100) / 100,
  };
}

export async function benchScale(opts: {
  rows: readonly number[];
  dir: string;
  format?: ScaleFormat;
}): Promise<ScaleResult> {
  const sandbox = await startSandboxProcess();
  try {
    const runs: ScaleRun[] = [];
    for (const n of [...opts.rows].sort((a, b) => a - b))
      runs.push(await runOnce(n, opts.dir, sandbox.url, opts.format ?? 'csv'));
    const small = runs[0];
    const large = runs[runs.length - 1];
    return {
      runs,
      rssRatio: small.peakRssMb && large.peakRssMb ? ratio(large.peakRssMb, small.peakRssMb) : null,
      rowsRatio: ratio(large.rows, small.rows),
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
  }
}

export interface SharedRateResult {
  readonly workers: number;
  readonly limitPerMinute: number;
  readonly rows: number;
  readonly exits: readonly (number | null)[];
  readonly achievedPerMinute: number;
  readonly shareOfLimit: number;
  readonly sandbox429: number;
  readonly maxInAnyWindow: number;
}

interface WorkflowStats {
  requests: number;
  sent429: number;
  maxInWindow: number;
}

async function workflowStats(url: string): Promise<WorkflowStats> {
  const res = await fetch(`${url}/__sandbox/stats`);
  const body = (await res.json()) as { services: { workflow: WorkflowStats } };
  return body.services.workflow;
}

/**
 * `workers` processes (`run --shard K/N --redis URL`) sharing the documented workflow limit (500/min,
 * strict 60 s sliding window in a sandbox process) for about `seconds`: the combined achieved rate as a
 * share of the limit, and the 429s the sandbox sent (should be 0).
 */
export async function benchSharedRate(opts: {
  dir: string;
  redisUrl: string;
  workers?: number;
  perMinute?: number;
  seconds?: number;
}): Promise<SharedRateResult> {
  const workers = opts.workers ?? 3;
  const perMinute = opts.perMinute ?? 500;
  const rows = Math.ceil((perMinute * (opts.seconds ?? 90)) / 60);
  const sandbox = await startSandboxProcess([`workflow=${perMinute}/min`]);
  const input = join(opts.dir, `shared-${rows}.csv`);
  await writeLocationCsv(input, rows);
  const suffix = `bench-${process.pid}-${Date.now()}`;
  let first = 0;
  let last = 0;
  let seen = 0;
  const poll = setInterval(() => {
    workflowStats(sandbox.url)
      .then((st) => {
        if (st.requests > seen) {
          if (seen === 0) first = performance.now();
          last = performance.now();
          seen = st.requests;
        }
      })
      .catch(() => undefined);
  }, 50);
  try {
    const env = {
      ...process.env,
      BRE_BASE_URL: sandbox.url,
      BUREAU_BASE_URL: sandbox.url,
      ACCOUNT_BASE_URL: sandbox.url,
      BRE_CLIENT_ID: CLIENT_ID,
      BRE_AUTH_TOKEN: TOKEN,
      BRE_LIMITER_ID_SUFFIX: suffix,
    };
    const exits = await Promise.all(
      Array.from({ length: workers }, async (_, i) => {
        const out = join(opts.dir, `shared-w${i + 1}`);
        rmSync(out, { recursive: true, force: true });
        const child = spawn(
          process.execPath,
          [
            CLI,
            'run',
            'location',
            '--input',
            input,
            '--out',
            out,
            '--no-progress',
            '--shard',
            `${i + 1}/${workers}`,
            '--redis',
            opts.redisUrl,
            '--rate',
            `workflow=${perMinute}/min`,
          ],
          { env, stdio: 'ignore' },
        );
        const [code] = (await once(child, 'exit')) as [number | null];
        rmSync(out, { recursive: true, force: true });
        return code;
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    clearInterval(poll);
    const st = await workflowStats(sandbox.url);
    const achieved = last > first ? ((seen - 1) * 60_000) / (last - first) : 0;
    return {
      workers,
      limitPerMinute: perMinute,
      rows,
      exits,
      achievedPerMinute: Math.round(achieved * 10) / 10,
      shareOfLimit: ratio(achieved, perMinute),
      sandbox429: st.sent429,
      maxInAnyWindow: st.maxInWindow,
    };
  } finally {
    clearInterval(poll);
    rmSync(input, { force: true });
    sandbox.child.kill('SIGTERM');
    await once(sandbox.child, 'exit').catch(() => undefined);
  }
}
