/**
 * Benchmark of `bre-batch compare` on synthetic runs: two results.ndjson files of `rows` rows each (and an
 * input CSV for --by/--outcome), compared in a child process (plain node running the shipped build's compare)
 * so the peak RSS measured is the compare's own.
 * The point to watch is the ratio of peak RSS at 1,000,000 rows to 100,000 rows: the join is on disk (hash
 * buckets), so memory must stay roughly flat while the files grow tenfold.
 *
 * With `risk`, the compare also assesses two scores against the outcome (an integer bureau score with about
 * 600 values, and a probability of default with a distinct value on nearly every key, the worst case for the
 * score tables) and groups the keys by month of an application date (--score, --period).
 *
 *   npx tsx bench/compare.ts [rows] [--risk]     # standalone (after npm run build): prints one JSON line
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TextSink } from '@bre-batch/backtest/files';
import { FILES, writeManifest } from '@bre-batch/formats';
import { mulberry32 } from '@bre-batch/sandbox/logic/hash';
import { shippedModule } from './harness.js';

export interface BenchCompareOptions {
  readonly rows: number;
  /** Working folder: the synthetic runs and the compare output go here (created if missing). */
  readonly dir: string;
  /** Also read an input CSV for --by state --outcome bad (default true). */
  readonly withInput?: boolean;
  /** With the input: also --score bureau_intel.bureau_score --score model.pd (lower is better) --period app_date. */
  readonly risk?: boolean;
  /** Remove the synthetic files and the compare output afterwards (default true); `dir` itself is kept. */
  readonly cleanup?: boolean;
}

export interface BenchCompareResult {
  readonly rows: number;
  /** Wall time of the compare alone (in the child, from start to the three files written). */
  readonly seconds: number;
  /** Peak resident set of the child process (getrusage maxrss). */
  readonly peakRssMb: number;
  /** Size of each synthetic results.ndjson. */
  readonly resultsMb: number;
  readonly buckets: number;
  readonly synthSeconds: number;
}

const STATES = ['KA', 'MH', 'TN', 'DL', 'UP', 'WB', 'GJ', 'RJ', 'TS', 'KL'];
const RULES = [
  'bureau_score_min',
  'dpd_check',
  'income_check',
  'fraud_check',
  'age_check',
  'enquiry_check',
  'obligation_check',
  'vintage_check',
];

function stageResult(
  score: number,
  salary: number,
  cutoff: number,
  r: () => number,
  state: string,
  pd: number,
): Record<string, unknown> {
  const approve = score >= cutoff;
  const decision = approve ? 'Approve' : score >= cutoff - 40 ? 'Proceed to Next Rule' : 'Reject';
  const failed = approve ? [] : RULES.filter((_, i) => r() < 0.25 + (i === 0 ? 0.5 : 0));
  return {
    decision,
    decision_reason: `${approve ? 'mobile_intel' : 'basic'} bre checked`,
    loan_amount: approve ? Math.round((salary * 0.4) / 500) * 500 : null,
    repayment_date: null,
    emi_decision: null,
    loan_offers: [],
    offers_count: 0,
    rule_engine_name: 'mobile_intel',
    rules_version: 'v1',
    rules_failed: failed,
    workflow: 'bureau',
    workflow_version: 'v1',
    request_id: `req-${Math.floor(r() * 1e12).toString(36)}`,
    'bureau_intel.bureau_score': score,
    'bureau_intel.cbs_risk_grade': Math.max(1, Math.min(10, Math.round((900 - score) / 60))),
    'bureau_intel.bureau_affordability': Math.round(salary * 0.3),
    'mobile_intel.fraud_flag': r() < 0.02,
    'mobile_intel.all_sms_count': Math.floor(r() * 5000),
    'mobile_intel.vendor_payday_score': Math.round(r() * 1000) / 1000,
    'mobile_intel.estimated_salary': salary,
    'geocoding.state': state,
    'model.pd': pd,
  };
}

/**
 * Writes `<dir>/a/results.ndjson`, `<dir>/b/results.ndjson` (+ manifest.json each) and `<dir>/input.csv`.
 * B is a challenger with a lower cut-off and a slightly different score; about 0.1% of keys are only in A,
 * 0.1% only in B. Returns the size of A's results file.
 */
export function synthesiseRuns(rows: number, dir: string, seed = 7): { resultsBytes: number } {
  mkdirSync(join(dir, 'a'), { recursive: true });
  mkdirSync(join(dir, 'b'), { recursive: true });
  // Seeded: every run of the benchmark compares the same data.
  const r = mulberry32(seed);
  const a = new TextSink(join(dir, 'a', FILES.results), 1024 * 1024);
  const b = new TextSink(join(dir, 'b', FILES.results), 1024 * 1024);
  const input = new TextSink(join(dir, 'input.csv'), 1024 * 1024);
  input.write('reference_id,state,bad,app_date\n');
  try {
    for (let row = 1; row <= rows; row += 1) {
      const key = `ref-${row.toString().padStart(8, '0')}`;
      const state = STATES[Math.floor(r() * STATES.length)];
      const score = 300 + Math.floor(r() * 600);
      const salary = 15000 + Math.floor(r() * 85000);
      const bad = r() < 0.9 - (score - 300) / 750 ? 1 : 0;
      // Applications spread evenly over 18 months, in row order.
      const month = Math.floor((18 * (row - 1)) / rows);
      const date = `${2024 + Math.floor(month / 12)}-${String((month % 12) + 1).padStart(2, '0')}-${String(1 + (row % 28)).padStart(2, '0')}`;
      input.write(`${key},${state},${r() < 0.3 ? '' : bad},${date}\n`);
      // A probability of default: continuous (a distinct value on nearly every key), informative, lower is better.
      const pd = 1 / (1 + Math.exp((score - 600) / 80 + (r() - 0.5)));
      const u = r();
      if (u >= 0.001)
        a.write(JSON.stringify({ row, key, stages: { bre: stageResult(score, salary, 620, r, state, pd) } }) + '\n');
      if (u < 0.001 || u >= 0.002) {
        const scoreB = Math.min(900, score + Math.floor(r() * 30) - 10);
        b.write(
          JSON.stringify({
            row,
            key,
            stages: { bre: stageResult(scoreB, salary, 600, r, state, pd * (0.9 + 0.2 * r())) },
          }) + '\n',
        );
      }
    }
  } finally {
    a.close();
    b.close();
    input.close();
  }
  for (const side of ['a', 'b']) {
    writeManifest(join(dir, side), {
      version: 1,
      tool: 'bre-batch',
      pipeline: { name: `bench_${side}`, path: 'synthetic', sha256: '' },
      input: { path: join(dir, 'input.csv'), format: 'csv', size: null, sha256: null },
      key: 'reference_id',
      shard: null,
      limit: null,
      created_at: new Date(0).toISOString(),
    });
  }
  return { resultsBytes: a.bytes };
}

/**
 * The child: plain node (no TypeScript loader, whose tens of MB would count in the peak RSS) running the
 * shipped build's runCompare. Arguments: the module's URL, then the options as JSON. Prints one JSON line.
 */
const CHILD = `
const [compareModule, json] = process.argv.slice(1);
const { runCompare } = await import(compareModule);
const a = JSON.parse(json);
const t0 = process.hrtime.bigint();
const r = await runCompare({
  outA: a.outA, outB: a.outB, out: a.out, tmpDir: a.tmpDir,
  ...(a.withInput ? { by: 'state', outcome: 'bad' } : {}),
  ...(a.withInput && a.risk ? { score: ['bureau_intel.bureau_score', 'model.pd'], scoreDirection: ['model.pd=lower'], period: 'app_date' } : {}),
});
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
// maxRSS is in kilobytes (getrusage).
process.stdout.write(JSON.stringify({ seconds: Math.round(seconds * 100) / 100, maxRssKb: process.resourceUsage().maxRSS, buckets: r.report.options.buckets }) + '\\n');
`;

export async function benchCompare(opts: BenchCompareOptions): Promise<BenchCompareResult> {
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true });
  const t0 = process.hrtime.bigint();
  const { resultsBytes } = synthesiseRuns(opts.rows, dir);
  const synthSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const args = {
    outA: join(dir, 'a'),
    outB: join(dir, 'b'),
    out: join(dir, 'cmp'),
    tmpDir: dir,
    withInput: opts.withInput ?? true,
    risk: opts.risk ?? false,
  };
  try {
    const child = await new Promise<{ seconds: number; maxRssKb: number; buckets: number }>((resolve, reject) => {
      const p = spawn(
        process.execPath,
        ['--input-type=module', '-e', CHILD, shippedModule('compare.js', 'backtest'), JSON.stringify(args)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      p.stdout.setEncoding('utf8');
      p.stdout.on('data', (d: string) => {
        out += d;
      });
      p.on('error', reject);
      p.on('close', (code) => {
        if (code !== 0) return reject(new Error(`compare child exited with ${code}`));
        try {
          resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
        } catch (err) {
          reject(err);
        }
      });
    });
    return {
      rows: opts.rows,
      seconds: child.seconds,
      peakRssMb: Math.round((child.maxRssKb / 1024) * 10) / 10,
      resultsMb: Math.round((resultsBytes / 1048576) * 10) / 10,
      buckets: child.buckets,
      synthSeconds: Math.round(synthSeconds * 10) / 10,
    };
  } finally {
    // Only what this function created: `dir` itself may be the caller's.
    if (opts.cleanup ?? true) {
      for (const name of ['a', 'b', 'cmp', 'input.csv']) await rm(join(dir, name), { recursive: true, force: true });
    }
  }
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const rows = Number(process.argv[2] ?? 100_000);
  const risk = process.argv.includes('--risk');
  const { tmpdir } = await import('node:os');
  const { mkdtempSync } = await import('node:fs');
  const result = await benchCompare({ rows, risk, dir: mkdtempSync(join(tmpdir(), 'bre-bench-compare-')) });
  process.stdout.write(JSON.stringify(result) + '\n');
}
