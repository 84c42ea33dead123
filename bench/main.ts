/**
 * `npm run bench`: the performance figures the issues ask for, each as a ratio measured within one run
 * (these machines are shared and noisy; absolute times are not comparable between runs).
 *
 *   npm run bench -- [--quick] [--only rate,overlap,raw,adaptive,scale,scale_parquet,compare,compare_risk,rebuild,shared]
 *
 * `shared` (workers sharing one limit through Redis at BRE_BENCH_REDIS_URL, default redis://127.0.0.1:6379)
 * runs only when named in --only.
 *
 * (`npm run bench` builds dist/, then runs this file through tsx.)
 *
 * Results are printed as a table and written to bench-results.json.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRunSummary } from '../src/output/format/index.js';
import { startSandbox, type Sandbox } from '../src/sandbox/index.js';
import { ratio, runCli, writeLocationCsv } from './harness.js';
import { benchRawVsAutocannon } from './raw.js';
import { benchCompare } from './compare.js';
import { benchRebuild } from './rebuild.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only'));
const only = onlyArg ? (onlyArg.split('=')[1] ?? args[args.indexOf(onlyArg) + 1]).split(',') : undefined;
const OPT_IN = new Set(['shared']);
const want = (name: string) => (only ? only.includes(name) : !OPT_IN.has(name));
const work = mkdtempSync(join(tmpdir(), 'bre-bench-'));
const figures: Record<string, unknown> = {};

function envFor(sb: Sandbox): Record<string, string> {
  return { BRE_BASE_URL: sb.url, BUREAU_BASE_URL: sb.url, ACCOUNT_BASE_URL: sb.url, BRE_CLIENT_ID: sb.clientId, BRE_AUTH_TOKEN: sb.authToken };
}

const summaryOf = loadRunSummary;

/** Sustained rate at the documented workflow limit against the sandbox's strict sliding window. */
async function benchRate(): Promise<void> {
  const perMin = 500;
  const seconds = quick ? 70 : 150;
  const rows = Math.ceil((perMin * seconds) / 60);
  const input = join(work, 'rate.csv');
  await writeLocationCsv(input, rows);
  const sb = await startSandbox({ rate: { workflow: { limit: perMin, windowMs: 60_000 } } });
  const out = join(work, 'rate-out');
  const r = await runCli(['run', 'location', '--input', input, '--out', out, '--no-progress'], envFor(sb));
  const st = sb.stats().services.workflow;
  await sb.close();
  const s = summaryOf(out);
  const achieved = s.services.workflow?.achieved_per_minute ?? 0;
  figures.rate = {
    limit_per_minute: perMin, rows, exit: r.code, achieved_per_minute: achieved, share_of_limit: ratio(achieved, perMin),
    sandbox_429: st.throttled, max_in_any_window: st.maxInWindow, seconds: Math.round(r.seconds),
  };
}

/** A two-stage pipeline against each of its stages alone: overlap means wall ~ the slower stage. */
async function benchOverlap(): Promise<void> {
  const rows = quick ? 600 : 1200;
  const rates = ['--rate', 'bureau=100/s', '--rate', 'workflow=50/s'];
  const sb = await startSandbox({ rate: { workflow: { limit: 50, windowMs: 1000 }, bureau: { limit: 100, windowMs: 1000 } } });
  const sample = readFileSync(join(process.cwd(), 'samples', 'rescore.csv'), 'utf8').trim().split('\n');
  const lines = [sample[0]];
  for (let i = 0; i < rows; i += 1) {
    const src = sample[1 + (i % (sample.length - 1))].split(',');
    src[0] = `OV-${i + 1}`;
    lines.push(src.join(','));
  }
  const input = join(process.cwd(), 'samples', `.bench-overlap-${process.pid}.csv`);
  writeFileSync(input, `${lines.join('\n')}\n`);
  try {
    const env = envFor(sb);
    const bureau = await runCli(['run', 'bureau_features', '--input', input, '--out', join(work, 'ov-b'), '--no-progress', ...rates], env);
    const workflow = await runCli(['run', 'bureau_mobile_bank', '--input', input, '--out', join(work, 'ov-w'), '--no-progress', ...rates], env);
    const both = await runCli(['run', 'rescore', '--input', input, '--out', join(work, 'ov-r'), '--no-progress', ...rates], env);
    const slower = Math.max(bureau.seconds, workflow.seconds);
    figures.overlap = {
      rows, bureau_alone_s: round(bureau.seconds), workflow_alone_s: round(workflow.seconds), two_stage_s: round(both.seconds),
      ratio_to_slower_stage: ratio(both.seconds, slower), exits: [bureau.code, workflow.code, both.code], sandbox_429: sb.stats().services.workflow.throttled + sb.stats().services.bureau.throttled,
    };
  } finally {
    rmSync(input, { force: true });
    await sb.close();
  }
}

/** The account limit is undocumented: the adaptive limiter against a sandbox limit it is not told. */
async function benchAdaptive(): Promise<void> {
  const hidden = 300;
  const seconds = quick ? 150 : 240;
  const sb = await startSandbox({ rate: { account: { limit: hidden, windowMs: 60_000 } } });
  const rows = Math.ceil((hidden * seconds) / 60 * 1.5);
  const lines = ['reference_id,user_id,aa_session_id,date_from,date_to'];
  for (let i = 1; i <= rows; i += 1) lines.push(`AD-${i},user${i},sess${i},2026-05-01,2026-08-31`);
  const input = join(work, 'adaptive.csv');
  writeFileSync(input, `${lines.join('\n')}\n`);
  const pipeline = join(work, 'aa_only.yaml');
  writeFileSync(pipeline, 'name: aa_only\nstages:\n  - id: aa\n    kind: aa_fetch\n    options: { generate_insights: false }\n');
  const out = join(work, 'adaptive-out');
  // Interrupted after `seconds`: the figure is the rate it settles at, not the time to finish.
  const r = await runCli(['run', pipeline, '--input', input, '--out', out, '--no-progress', '--stop-grace', '2s'], envFor(sb), seconds * 1000);
  const st = sb.stats().services.account;
  await sb.close();
  const s = summaryOf(out);
  figures.adaptive = {
    hidden_limit_per_minute: hidden, start_per_minute: 120, seconds: Math.round(r.seconds), exit: r.code,
    achieved_per_minute: s.services.account?.achieved_per_minute ?? null, share_of_hidden_limit: ratio(s.services.account?.achieved_per_minute ?? 0, hidden),
    final_limiter_per_minute: s.services.account?.limiter_final_per_minute ?? null, sandbox_429: st.throttled, calls: st.requests,
    share_429: ratio(st.throttled, st.requests),
  };
}

async function benchRaw(): Promise<void> {
  figures.raw = {
    // Rows enough for the runner to run about as long as autocannon does (seconds of steady state each), so
    // neither figure is mostly start-up.
    latency_0ms: await benchRawVsAutocannon({ dir: work, rows: quick ? 50_000 : 150_000, seconds: quick ? 5 : 8, rounds: quick ? 3 : 5 }),
    latency_20ms: await benchRawVsAutocannon({ dir: work, rows: quick ? 10_000 : 20_000, seconds: quick ? 5 : 8, latencyMs: 20, rounds: 3 }),
  };
}

async function benchScaleRss(): Promise<void> {
  try {
    const mod = await import('./scale.js');
    figures.scale = await mod.benchScale({ rows: quick ? [20_000, 200_000] : [100_000, 1_000_000], dir: work });
  } catch (err) {
    figures.scale = { error: (err as Error).message };
  }
}

/** The scale run with the input as Parquet: peak RSS must stay flat across row groups (issue 12: <= 1.25x). */
async function benchScaleParquetRss(): Promise<void> {
  const { benchScale } = await import('./scale.js');
  figures.scale_parquet = await benchScale({ rows: quick ? [100_000, 300_000] : [100_000, 1_000_000], dir: work, format: 'parquet' });
}

async function benchShared(): Promise<void> {
  const { benchSharedRate } = await import('./scale.js');
  figures.shared = await benchSharedRate({ dir: work, redisUrl: process.env.BRE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', seconds: quick ? 60 : 90 });
}

async function benchCompareRss(): Promise<void> {
  const small = await benchCompare({ rows: quick ? 20_000 : 100_000, dir: work });
  const large = await benchCompare({ rows: quick ? 200_000 : 1_000_000, dir: work });
  figures.compare = { small, large, rss_ratio: ratio(large.peakRssMb, small.peakRssMb) };
}

/** The same with --score (an integer score and a continuous one) and --period: the credit-risk figures. */
async function benchCompareRiskRss(): Promise<void> {
  const small = await benchCompare({ rows: quick ? 20_000 : 100_000, dir: work, risk: true });
  const large = await benchCompare({ rows: quick ? 200_000 : 1_000_000, dir: work, risk: true });
  figures.compare_risk = { small, large, rss_ratio: ratio(large.peakRssMb, small.peakRssMb), time_ratio: ratio(large.seconds, small.seconds) };
}

/** The end of a run, spooled and from the journal alone: seconds per million rows and peak RSS by size. */
async function benchRebuildEnd(): Promise<void> {
  figures.rebuild = await benchRebuild({ rows: quick ? [20_000, 200_000] : [100_000, 1_000_000], dir: work });
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

const steps: [string, () => Promise<void>][] = [
  ['rate', benchRate], ['overlap', benchOverlap], ['raw', benchRaw], ['adaptive', benchAdaptive], ['scale', benchScaleRss], ['scale_parquet', benchScaleParquetRss], ['compare', benchCompareRss], ['compare_risk', benchCompareRiskRss],
  ['rebuild', benchRebuildEnd], ['shared', benchShared],
];
for (const [name, fn] of steps) {
  if (!want(name)) continue;
  process.stderr.write(`bench: ${name}...\n`);
  try {
    await fn();
  } catch (err) {
    figures[name] = { error: (err as Error).stack };
  }
  process.stderr.write(`bench: ${name}: ${JSON.stringify(figures[name])}\n`);
}
writeFileSync('bench-results.json', `${JSON.stringify({ at: new Date().toISOString(), quick, figures }, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
rmSync(work, { recursive: true, force: true });
