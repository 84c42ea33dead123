/**
 * The coverage simulation of issue 25: over many seeds, do the 95% intervals `compare` gives on a sampled run
 * cover the value of the full run in 93 to 97% of them? For the approval rate, the swap-out share, the bad
 * rate of the approved set and the champion score's AUC.
 *
 * How, and why this way (affordable on two shared cores, and real end to end):
 * 1. One full run: `bre-batch run champion_challenger --rate off` over a generated input (the shipped sample's
 *    make, scripts/champion-challenger-sample.ts --rows), against the built-in sandbox.
 * 2. The truth: `compare` on a census of that run (every row, weight 1: `--sample-share 1`, the same strata),
 *    whose estimates are the full run's figures; the plain figures of `compare` on the full folder are checked
 *    to agree.
 * 3. Per seed, a sample drawn by the product's own selection (src/pipeline/sample.ts: the counting pass over
 *    the input, bottom-k of sha256(seed, key) per stratum, src/sample/), written as the sampled run's folder
 *    from the full run's lines of the chosen rows, then the real `bre-batch compare` on it.
 *
 *    A sampled run's lines are the full run's lines of its rows: the sandbox answers a row from the row alone
 *    (packages/sandbox/src/logic/), so sending it among 20,000 rows or among 4,000 changes nothing but request ids.
 * That
 *    lets one full run stand for 200 sampled runs instead of 200 runs; `checkRealRuns` proves it on a few seeds
 *    by running `run --sample-share` for real and finding compare.json's estimates identical.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SampleOptions } from '../src/sample/design.js';
import { sampleCsv } from '../scripts/champion-challenger-sample.js';
import { runCli } from './harness.js';
import { drawFromInput, writeSampledFolder } from './sample-folder.js';

/** The four figures the issue names, and where compare.json's estimates hold them. */
const FIGURES = ['approval_rate_a', 'swap_out_share', 'bad_rate_a_approved', 'auc_champion'] as const;
export type Figure = (typeof FIGURES)[number];

export interface Est {
  readonly estimate: number;
  readonly se: number | null;
  readonly ci: { readonly lower: number; readonly upper: number } | null;
}

const SCORE = 'bureau_intel.bureau_score';
const STRATIFY = 'application_date:month';
const COMPARE_ARGS = ['--stage-a', 'champion', '--stage-b', 'challenger', '--outcome', 'defaulted', '--score', SCORE];

/** The four estimates of compare.json's first comparison. */
function figuresOf(compareJson: string): Record<Figure, Est | null> {
  const j = JSON.parse(readFileSync(compareJson, 'utf8'));
  const e = j.comparisons?.[0]?.estimates;
  if (!e) throw new Error(`${compareJson} has no estimates: not a sampled comparison`);
  const score = (e.scores ?? []).find((s: { a?: { field?: string } }) => s.a?.field === SCORE);
  return {
    approval_rate_a: e.approval?.a ?? null,
    swap_out_share: e.swaps?.swap_out?.share ?? null,
    bad_rate_a_approved: e.bad_rates?.a_approved?.bad_rate ?? null,
    auc_champion: score?.a?.auc ?? null,
  };
}

/**
 * The real sampled run's estimates against the derived folder's. Its lines come in the order rows finished,
 * the derived folder's in row order: sums taken in another order differ in the last bits (so 1e-12, relative),
 * and the AUC's bootstrap draws its replicates over the units in their order, so its standard error is
 * another draw of the same bootstrap (within 15%); the AUC itself is exact.
 */
function sameEstimates(a: Record<Figure, Est | null>, b: Record<Figure, Est | null>): boolean {
  const close = (x: number | null | undefined, y: number | null | undefined, tol: number) =>
    x === y ||
    (typeof x === 'number' &&
      typeof y === 'number' &&
      Math.abs(x - y) <= tol * Math.max(1e-12, Math.abs(x), Math.abs(y)));
  return FIGURES.every((f) => {
    const x = a[f];
    const y = b[f];
    if (!x || !y) return x === y;
    return close(x.estimate, y.estimate, 1e-12) && close(x.se, y.se, f === 'auc_champion' ? 0.15 : 1e-12);
  });
}

export interface CoverageRow {
  readonly figure: Figure;
  /** The full run's value. */
  readonly full: number;
  readonly seeds: number;
  /** Seeds whose interval covers the full run's value; seeds without an interval. */
  readonly covered: number;
  readonly no_interval: number;
  readonly coverage: number;
  /** Mean half-width of the intervals, and the standard deviation of the estimates over the seeds. */
  readonly mean_half_width: number;
  readonly sd_of_estimates: number;
  readonly mean_se: number;
  /**
   * Mean and standard deviation over the seeds of z = (estimate − full run's value) / SE, for the seeds with an
   * SE above 0: 0 and 1 when the estimator is unbiased and its SE honest (sd z above 1: the SEs are too small).
   */
  readonly mean_z: number;
  readonly sd_z: number;
  readonly in_target: boolean;
}

/** issue 25's target: the 95% intervals cover the full run's value in 93% to 97% of the seeds. */
const TARGET = { lower: 0.93, upper: 0.97 } as const;

function meanSd(xs: readonly number[]): { mean: number; sd: number } {
  const mean = xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
  return { mean, sd: Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, xs.length - 1)) };
}

/**
 * One figure's row of the coverage table (pure): how many of `seeds` samples' intervals hold the full run's value
 * `full`, from the estimates of the seeds that gave one (a seed without an estimate or an interval counts as not
 * covering).
 */
export function coverageRow(figure: Figure, full: number, list: readonly Est[], seeds: number): CoverageRow {
  const withCi = list.filter((e) => e.ci !== null);
  const covered = withCi.filter((e) => e.ci!.lower <= full && full <= e.ci!.upper).length;
  const coverage = covered / seeds;
  const z = meanSd(list.filter((e) => e.se !== null && e.se > 0).map((e) => (e.estimate - full) / e.se!));
  return {
    figure,
    full,
    seeds,
    covered,
    no_interval: seeds - withCi.length,
    coverage,
    mean_half_width: withCi.reduce((a, e) => a + (e.ci!.upper - e.ci!.lower) / 2, 0) / Math.max(1, withCi.length),
    sd_of_estimates: meanSd(list.map((e) => e.estimate)).sd,
    mean_se: list.reduce((a, e) => a + (e.se ?? 0), 0) / Math.max(1, list.length),
    mean_z: z.mean,
    sd_z: z.sd,
    in_target: coverage >= TARGET.lower && coverage <= TARGET.upper,
  };
}

export interface CoverageResult {
  readonly rows: number;
  readonly share: number;
  readonly sampled: number;
  readonly strata: number;
  readonly seeds: number;
  readonly table: readonly CoverageRow[];
  readonly full_run_s: number;
  readonly per_seed_s: number;
  /**
   * Seeds also run for real (`run --sample-share`) whose estimates equal the derived folders' (see sameEstimates).
   */
  readonly real_runs_identical: readonly string[];
  readonly plain_vs_census: Readonly<Record<string, number>>;
}

export async function benchCoverage(o: {
  readonly dir: string;
  readonly rows: number;
  readonly share: number;
  readonly seeds: number;
  readonly realRuns: number;
  readonly log?: (l: string) => void;
  /** Runs `bre-batch ARGS` (`run` and `compare`): default a spawned CLI; the tests run it in their process. */
  readonly cli?: (args: readonly string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;
}): Promise<CoverageResult> {
  const log = o.log ?? (() => undefined);
  const cli = o.cli ?? ((args: readonly string[]) => runCli(args, {}));
  const input = join(o.dir, `cc-${o.rows}.csv`);
  writeFileSync(input, sampleCsv(o.rows));
  const full = join(o.dir, 'cov-full');
  const t0 = performance.now();
  const run = await cli([
    'run',
    'champion_challenger',
    '--input',
    input,
    '--out',
    full,
    '--no-progress',
    '--rate',
    'off',
  ]);
  if (run.code !== 0 && run.code !== 1) throw new Error(`the full run failed (${run.code}): ${run.stderr}`);
  const fullRunS = (performance.now() - t0) / 1000;
  log(`coverage: full run of ${o.rows} rows in ${fullRunS.toFixed(1)} s`);

  const draw = (options: SampleOptions) => drawFromInput(input, options);
  const compare = async (folder: string, out: string): Promise<Record<Figure, Est | null>> => {
    const r = await cli(['compare', folder, folder, ...COMPARE_ARGS, '--out', out]);
    if (r.code !== 0) throw new Error(`compare ${folder} failed (${r.code}): ${r.stderr}`);
    return figuresOf(join(out, 'compare.json'));
  };

  // The truth: a census (every row, weight 1) estimates the full run's figures exactly.
  const census = join(o.dir, 'cov-census');
  writeSampledFolder(full, census, await draw({ sampleShare: '1', stratifyBy: STRATIFY }));
  const truth = await compare(census, join(o.dir, 'cov-census-cmp'));
  const plain = JSON.parse(
    (await cli(['compare', full, full, ...COMPARE_ARGS, '--out', join(o.dir, 'cov-full-cmp')])).code === 0
      ? readFileSync(join(o.dir, 'cov-full-cmp', 'compare.json'), 'utf8')
      : '{}',
  );
  const c0 = plain.comparisons?.[0];
  // Absolute differences between compare's plain figures over the full run and the census estimates (both 0).
  const plainVsCensus = {
    approval_rate_a: Math.abs((c0?.approval?.a?.rate ?? NaN) - (truth.approval_rate_a?.estimate ?? NaN)),
    bad_rate_a_approved: Math.abs(
      (c0?.bad_rates?.a_approved?.bad_rate ?? NaN) - (truth.bad_rate_a_approved?.estimate ?? NaN),
    ),
  };

  const estimates: Record<Figure, Est[]> = {
    approval_rate_a: [],
    swap_out_share: [],
    bad_rate_a_approved: [],
    auc_champion: [],
  };
  let sampled = 0;
  let strata = 0;
  const t1 = performance.now();
  for (let i = 1; i <= o.seeds; i += 1) {
    const seed = `coverage-${i}`;
    const drawn = await draw({ sampleShare: String(o.share), stratifyBy: STRATIFY, seed });
    sampled = drawn.design.sampled;
    strata = drawn.design.strata.length;
    const folder = join(o.dir, 'cov-sample');
    rmSync(folder, { recursive: true, force: true });
    writeSampledFolder(full, folder, drawn);
    const got = await compare(folder, join(o.dir, 'cov-sample-cmp'));
    for (const f of FIGURES) if (got[f]) estimates[f].push(got[f]!);
    if (i % 20 === 0) log(`coverage: ${i} of ${o.seeds} seeds`);
  }
  const perSeedS = (performance.now() - t1) / 1000 / o.seeds;

  // A few seeds run for real: the sampled run's compare.json estimates equal the derived folder's.
  const identical: string[] = [];
  for (let i = 1; i <= o.realRuns; i += 1) {
    const seed = `coverage-${i}`;
    const out = join(o.dir, `cov-real-${i}`);
    const r = await cli([
      'run',
      'champion_challenger',
      '--input',
      input,
      '--out',
      out,
      '--no-progress',
      '--rate',
      'off',
      '--sample-share',
      String(o.share),
      '--stratify-by',
      STRATIFY,
      '--seed',
      seed,
    ]);
    if (r.code !== 0 && r.code !== 1) throw new Error(`the sampled run failed (${r.code}): ${r.stderr}`);
    const real = await compare(out, join(o.dir, `cov-real-cmp-${i}`));
    const derivedFolder = join(o.dir, `cov-derived-${i}`);
    writeSampledFolder(full, derivedFolder, await draw({ sampleShare: String(o.share), stratifyBy: STRATIFY, seed }));
    const derived = await compare(derivedFolder, join(o.dir, `cov-derived-cmp-${i}`));
    if (sameEstimates(real, derived)) identical.push(seed);
    else
      log(
        `coverage: ${seed}: a real sampled run's estimates differ from the derived folder's:\n${JSON.stringify(real)}\n${JSON.stringify(derived)}`,
      );
  }

  const table = FIGURES.map((f): CoverageRow => {
    const t = truth[f];
    if (!t) throw new Error(`the census has no ${f}`);
    return coverageRow(f, t.estimate, estimates[f], o.seeds);
  });
  return {
    rows: o.rows,
    share: o.share,
    sampled,
    strata,
    seeds: o.seeds,
    table,
    full_run_s: round(fullRunS),
    per_seed_s: round(perSeedS),
    real_runs_identical: identical,
    plain_vs_census: plainVsCensus,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
