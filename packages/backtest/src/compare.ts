/**
 * `bre-batch compare`: back-test of two runs over the same rows. Streams both results files twice (partition,
 * then join bucket by bucket) and writes compare.csv, compare.json and report.html.
 * Memory: one bucket of each run + the figures (O(categories² + rules + feature bins + segments)) + 3 bytes per
 * input row when --by/--outcome are used; never a whole run.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { BreError } from '@bre-batch/core/errors';
import { isInputFormat, resolveFormat, resolveTextOptions, type InputFormat } from '@bre-batch/formats/input/read';
import type { Json, NormalisedResult } from '@bre-batch/core/types';
import { ComparisonAccumulator } from './comparison.js';
import type { CompareJson, ComparisonJson, RunSummary } from './compare-json.js';
import { csvLine } from './csv.js';
import { featureBins, type FeatureBins } from './features.js';
import { NumberSink, readNumbers, TextSink } from './files.js';
import { countErrors, openRunFolder, type ErrorCounts, type RunFolder } from './folder.js';
import { HistogramCounter, histogramEdges } from './histogram.js';
import { readInputColumns, type RowColumns, type InputReading } from './input-columns.js';
import { joinBuckets, type JoinedLine } from './join.js';
import { autoBuckets, resolveCompareOptions, type CompareOptions, type ResolvedOptions } from './options.js';
import { partitionRun, type PartitionStats } from './partition.js';
import { renderReport } from './report.js';
import { RiskAccumulator, scoreCells } from './risk.js';
import { sampleEstimates } from './sampled/estimates.js';
import { SAMPLE_METHODS } from './sampled/methods.js';
import { Sampling } from './sampled/sampling.js';
import { SampleUnits } from './sampled/units.js';
import type { ScoreSpec } from './score/spec.js';
import { amountField, sideView, type SideView } from './side.js';
import { InputStability, type InputStabilityFigures } from './stability/input.js';
import { topMovers, type Mover, type StabilityFigures } from './stability/over-time.js';
import { PSI_EPSILON } from './stats.js';
import { versionOfResult, versionPair, VersionTally } from './versions.js';

export type { CompareJson, ComparisonJson } from './compare-json.js';

export interface CompareResult {
  readonly outDir: string;
  readonly files: { readonly csv: string; readonly json: string; readonly html: string };
  readonly report: CompareJson;
}

const METHODS: Readonly<Record<string, string>> = {
  approved:
    "decision 'Approve' or 'Approved' in any case (emi: emi_decision); skipped, absent or any other decision is not approved",
  population:
    'keys present exactly once in both runs; keys only in one run, duplicate keys and rows without a key are counted, listed and left out',
  approval_rate_ci: 'Wilson score interval, 95%',
  approval_difference:
    'B − A; 95% interval by Newcombe (1998) method 10 for paired proportions (same keys on both sides)',
  psi: `Σ (b_i − a_i)·ln(b_i/a_i) over A's bins; shares floored at ${PSI_EPSILON}; bands: < 0.1 stable, 0.1–0.25 moderate, ≥ 0.25 major`,
  psi_bins:
    "numeric: A's deciles (inverse empirical CDF) from a uniform sample of A, plus a missing bin; categorical: A's 20 most frequent values, '(other)', '(missing)'",
  amount_change:
    'B − A over keys both approved with an amount on both sides; zero changes counted apart from the histogram',
  rule_rates: 'rows where the rule is in rules_failed / rows where the stage ran on that side',
  bad_rate: 'outcome 1 = bad, 0 = good, anything else unknown and left out of the rate; 95% Wilson interval',
  outcome_coverage:
    'known / keys of each set; best and worst case: the bad rate if every unknown outcome were good, or bad',
  auc: 'P(a good scores better than a bad), ties ½, over keys with the score and a known outcome; Gini = 2·AUC − 1; 95% interval AUC ± 1.96·SE (DeLong 1988, computed with the midranks of Sun & Xu 2014)',
  paired_auc_test:
    'DeLong test of AUC_B − AUC_A over keys with both scores and a known outcome: z = difference / SE, SE from the covariance of the structural components; two-sided p',
  ks: 'max over score r of |F_bad(r) − F_good(r)|, F = share scoring ≤ r; the smallest such r is reported',
  deciles:
    'cut points: inverse empirical CDF of all scored keys at 10%, ..., 90% (ties merged), bins (q_k−1, q_k], riskiest first',
  iv: 'Σ (g_i/G − b_i/B)·ln((g_i/G)/(b_i/B)) over the decile bins, shares floored at 1e-4; < 0.02 not predictive, < 0.1 weak, < 0.3 medium, else strong',
  tradeoff:
    'for approval rates 5%, 10%, ..., 100% of the scored keys: approve every key scoring at least as well as the ⌈p·N⌉-th best (ties never split); bad rate of that set over its known outcomes',
  operating_points: "each strategy's approval rate and approved-set bad rate over the keys with that score",
  periods:
    'input date column grouped by calendar month, ISO week or quarter; periods with fewer keys than min_keys are marked small',
  stability:
    "PSI of each period against the baseline (the oldest periods pooled until they hold a quarter of the dated values and at least min_keys, the last period always left out); noise = (bins − 1)·(1/n_baseline + 1/n), the PSI expected by chance; p_value: PSI/(1/n_baseline + 1/n) against χ² with bins − 1 degrees of freedom; top movers ranked by PSI − noise; input columns: bins from a uniform sample of the input; result fields: A's deciles",
};

interface Comparison {
  readonly acc: ComparisonAccumulator;
  readonly risk: RiskAccumulator;
  /** The compared keys as units of the sample (sampled runs only). */
  readonly units: SampleUnits | null;
  readonly deltas: NumberSink;
  readonly decisions: boolean;
  readonly prefix: string;
  readonly versions: VersionTally;
}

export async function runCompare(options: CompareOptions): Promise<CompareResult> {
  const o = resolveCompareOptions(options);
  const A = await openRunFolder(o.outA, 'A');
  const B = o.sameFolder ? A : await openRunFolder(o.outB, 'B');
  // Sampled runs: refused unless both are one sample; their rows are checked against the design on the first pass.
  const sampling = Sampling.open(A, B, o.sameFolder, o.replicates);
  const inputStability = o.period
    ? new InputStability({ key: manifestKey(A), outcome: o.outcome, period: o.period.column }, o.sampleSize)
    : null;
  const columns = await loadColumns(o, A, inputStability);
  const buckets = o.buckets ?? autoBuckets(Math.max(A.resultsBytes, B.resultsBytes));
  await mkdir(o.tmpDir, { recursive: true });
  const tmp = await mkdtemp(join(o.tmpDir, 'bre-compare-'));
  try {
    const sampleStages = o.stages.mode === 'pair' ? new Set([o.stages.stageA as string]) : ('all' as const);
    const pa = await partitionRun({
      source: A.resultsPath,
      buckets,
      tmpDir: tmp,
      prefix: 'a',
      sampleStages,
      sampleSize: o.sampleSize,
      onLine: sampling?.resultLine('a'),
    });
    // B is sampled only to check a challenger score named differently (--score FIELD_A:FIELD_B).
    const sampleB = o.scores.some((sc) => sc.fieldA !== sc.fieldB) ? ('all' as const) : undefined;
    const pb = await partitionRun({
      source: B.resultsPath,
      buckets,
      tmpDir: tmp,
      prefix: 'b',
      sampleStages: sampleB,
      sampleSize: o.sampleSize,
      onLine: sampling?.resultLine('b'),
    });
    await sampling?.checkRuns();
    const pairs = choosePairs(o, A, B, pa, pb);
    const scoresOf = scoresByPair(o.scores, pairs, pa, pb);
    if (inputStability && columns) await inputStability.count(columns.path, columns.reading, columns.rows);

    await mkdir(o.out, { recursive: true });
    const csvPath = join(o.out, 'compare.csv');
    const csvPartial = `${csvPath}.partial`;
    const csv = new TextSink(csvPartial);
    const comparisons: Comparison[] = pairs.map(([sa, sb], i) => {
      const label = sa === sb ? sa : `${sa}_vs_${sb}`;
      const decisions = (pa.stages.get(sa)?.decisions ?? false) || (pb.stages.get(sb)?.decisions ?? false);
      const deltas = new NumberSink(join(tmp, `deltas-${i}.f64`));
      const featureBins = binsFromSample(pa, sa);
      const acc = new ComparisonAccumulator(
        {
          label,
          stageA: sa,
          stageB: sb,
          decisions,
          featureBins,
          withOutcome: o.outcome !== undefined,
          withSegments: o.by !== undefined || o.byVersion,
        },
        (d) => deltas.push(d),
      );
      const risk = new RiskAccumulator({
        scores: scoresOf[i],
        period: o.period,
        withOutcome: o.outcome !== undefined,
        decisions,
        featureBins,
        scorePath: join(tmp, `scores-${i}.f64`),
      });
      const units = sampling ? new SampleUnits(scoresOf[i], featureBins, sampling.weights) : null;
      return {
        acc,
        risk,
        units,
        deltas,
        decisions,
        prefix: pairs.length > 1 ? `${label}.` : '',
        versions: new VersionTally(),
      };
    });
    const sameInput = o.input !== undefined || sameInputFile(A, B);
    let counts: Awaited<ReturnType<typeof joinBuckets>>;
    try {
      csv.write(csvLine(csvHeader(comparisons, o, sampling !== null)));
      counts = await joinBuckets({
        aPaths: pa.bucketPaths ?? [A.resultsPath],
        bPaths: pb.bucketPaths ?? [B.resultsPath],
        out: csv,
        listCap: o.listCap,
        visit: (line) => csvLine(visitLine(line, comparisons, o, columns?.rows ?? null, sameInput, sampling)),
      });
    } catch (err) {
      csv.close();
      await rm(csvPartial, { force: true });
      throw err;
    } finally {
      csv.close();
      for (const c of comparisons) {
        c.deltas.close();
        c.risk.close();
      }
    }

    const figures = comparisons.map((c): ComparisonJson => {
      const range = c.acc.changeRange();
      let histogram = null;
      if (range) {
        const counter = new HistogramCounter(histogramEdges(range.min, range.max));
        for (const d of readNumbers(c.deltas.path)) counter.add(d);
        histogram = counter.result();
      }
      const estimates =
        c.units && sampling
          ? sampleEstimates(c.units.table(), c.units.weightedFeatures(), {
              strata: sampling.strata,
              decisions: c.decisions,
              withOutcome: o.outcome !== undefined,
              specs: c.risk.setup.scores,
              replicates: o.replicates,
              seed: sampling.bootstrapSeed,
            })
          : null;
      return {
        ...c.acc.figures(histogram),
        ...c.risk.figures(),
        basis: sampling ? 'sample' : 'all compared keys',
        estimates,
        versions: c.versions.figures(o.byVersion),
      };
    });
    const inputFigures = inputStability && o.period ? inputStability.figures(o.period.minKeys) : null;

    const [errA, errB] = await Promise.all([countErrors(A.dir), o.sameFolder ? null : countErrors(B.dir)]);
    const report: CompareJson = {
      version: 1,
      generated_at: o.now().toISOString(),
      a: runSummary(A, pa, errA),
      b: runSummary(B, pb, o.sameFolder ? errA : errB),
      options: {
        product: o.product,
        decision_field: o.product === 'emi' ? 'emi_decision' : 'decision',
        amount_field: amountField(o.product),
        outcome: o.outcome ?? null,
        by: o.by ?? null,
        by_version: o.byVersion,
        scores: o.scores.map((sc) => ({
          label: sc.label,
          field_a: sc.fieldA,
          field_b: sc.fieldB,
          direction: sc.direction,
        })),
        period: o.period ? { column: o.period.column, unit: o.period.unit, min_keys: o.period.minKeys } : null,
        input: columns ? columns.path : null,
        buckets,
        sample_size: o.sampleSize,
        replicates: sampling ? o.replicates : null,
      },
      sample: sampling ? sampling.summary() : null,
      join: {
        matched: counts.matched,
        only_a: counts.onlyA,
        only_b: counts.onlyB,
        only_a_keys: counts.onlyAKeys,
        only_b_keys: counts.onlyBKeys,
        duplicates: {
          keys: counts.duplicateKeys,
          a_keys: counts.duplicateKeysA,
          b_keys: counts.duplicateKeysB,
          a_rows: counts.duplicateRowsA,
          b_rows: counts.duplicateRowsB,
          sample: counts.duplicateSample,
        },
        no_key: { a_rows: counts.noKeyA, b_rows: counts.noKeyB },
        list_cap: o.listCap,
      },
      comparisons: figures,
      input_stability: inputFigures,
      stability_top_movers: o.period ? movers(inputFigures, figures) : null,
      methods: sampling ? { ...SAMPLE_METHODS, ...METHODS } : METHODS,
    };
    const jsonPath = join(o.out, 'compare.json');
    const htmlPath = join(o.out, 'report.html');
    await writeFile(`${jsonPath}.partial`, JSON.stringify(report, null, 2) + '\n');
    await writeFile(`${htmlPath}.partial`, renderReport(report));
    await rename(csvPartial, csvPath);
    await rename(`${jsonPath}.partial`, jsonPath);
    await rename(`${htmlPath}.partial`, htmlPath);
    return { outDir: o.out, files: { csv: csvPath, json: jsonPath, html: htmlPath }, report };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function inputPathOf(run: RunFolder): string | undefined {
  const p = run.manifest?.input?.path;
  if (typeof p !== 'string' || p === '' || p === '-') return undefined;
  return isAbsolute(p) ? p : resolve(run.dir, p);
}

function sameInputFile(A: RunFolder, B: RunFolder): boolean {
  if (A === B) return true;
  const a = inputPathOf(A);
  return a !== undefined && a === inputPathOf(B);
}

interface LoadedColumns {
  readonly rows: RowColumns;
  readonly path: string;
  /** How it was read: the input stability's second pass reads it the same way. */
  readonly reading: InputReading;
}

function manifestKey(run: RunFolder): string | undefined {
  return typeof run.manifest?.key === 'string' ? run.manifest.key : undefined;
}

async function loadColumns(
  o: ResolvedOptions,
  A: RunFolder,
  stability: InputStability | null,
): Promise<LoadedColumns | null> {
  if (o.by === undefined && o.outcome === undefined && o.period === undefined) return null;
  const path = o.input ?? inputPathOf(A);
  const flags = [
    o.by !== undefined ? '--by' : '',
    o.outcome !== undefined ? '--outcome' : '',
    o.period !== undefined ? '--period' : '',
  ]
    .filter(Boolean)
    .join(' and ');
  if (path === undefined) {
    throw new BreError(
      'USAGE',
      `Expected --input FILE for ${flags} (run A's manifest.json names no input file), got none`,
      { field: 'input' },
    );
  }
  // Run A's own input is read as run A read it (its format, encoding and separator, from manifest.json), so
  // that its data row numbers are the ones its results carry; options given on the command line win.
  const fromManifest = o.input === undefined ? A.manifest?.input : undefined;
  const format: InputFormat =
    o.inputFormat ?? (isInputFormat(fromManifest?.format) ? fromManifest.format : undefined) ?? resolveFormat(path);
  const given = resolveTextOptions({ encoding: o.encoding, delimiter: o.delimiter }, format);
  const asRead = fromManifest?.reading;
  const encoding = given.encoding ?? asRead?.encoding ?? undefined;
  const delimiter = given.delimiter ?? asRead?.delimiter ?? undefined;
  try {
    const reading = { format, encoding, delimiter };
    const rows = await readInputColumns({
      path,
      ...reading,
      by: o.by,
      outcome: o.outcome,
      period: o.period ? { column: o.period.column, unit: o.period.unit } : undefined,
      onRow: stability ? (r) => stability.offer(r) : undefined,
    });
    return { rows, path, reading };
  } catch (err) {
    if (err instanceof BreError && err.code === 'INPUT_UNREADABLE') {
      throw new BreError(
        'USAGE',
        `Expected a readable input file for ${flags}, got '${path}' (${err.message}); use --input FILE`,
        { field: 'input', cause: err },
      );
    }
    throw err;
  }
}

function stageList(p: PartitionStats): string {
  return p.stages.size > 0 ? [...p.stages.keys()].join(', ') : 'no stages (no results)';
}

/** Which (stage of A, stage of B) pairs to compare; fails with USAGE naming what exists. */
function choosePairs(
  o: ResolvedOptions,
  A: RunFolder,
  B: RunFolder,
  pa: PartitionStats,
  pb: PartitionStats,
): [string, string][] {
  const s = o.stages;
  if (s.mode === 'pair' || s.mode === 'champion-challenger') {
    const sa = s.stageA as string;
    const sb = s.stageB as string;
    const hint =
      s.mode === 'champion-challenger'
        ? ' (the same folder twice compares --stage-a with --stage-b; default champion and challenger)'
        : '';
    if (!pa.stages.has(sa) && pa.rows > 0)
      throw new BreError('USAGE', `Expected stage '${sa}' in run A (${A.dir})${hint}, got ${stageList(pa)}`, {
        field: 'stage-a',
      });
    if (!pb.stages.has(sb) && pb.rows > 0)
      throw new BreError('USAGE', `Expected stage '${sb}' in run B (${B.dir})${hint}, got ${stageList(pb)}`, {
        field: 'stage-b',
      });
    return [[sa, sb]];
  }
  const shared = [...pa.stages.keys()].filter((id) => pb.stages.has(id));
  if (shared.length === 0) {
    if (pa.rows === 0 || pb.rows === 0) {
      // An empty run still compares (every key is only in the other run): use whatever stages the other has.
      const ids = [...pa.stages.keys(), ...pb.stages.keys()];
      return [...new Set(ids)].map((id) => [id, id]);
    }
    throw new BreError(
      'USAGE',
      `Expected runs A and B to share a stage id, got A: ${stageList(pa)}; B: ${stageList(pb)} (use --stage-a and --stage-b)`,
      { field: 'stage' },
    );
  }
  return shared.map((id) => [id, id]);
}

/**
 * Which scores each comparison assesses: those whose field is in the stage's sampled results (A's field in A's
 * sample; a differently named B field in B's). A score no comparison has is a usage error naming the numeric
 * fields there are.
 */
function scoresByPair(
  specs: readonly ScoreSpec[],
  pairs: readonly [string, string][],
  pa: PartitionStats,
  pb: PartitionStats,
): ScoreSpec[][] {
  const fieldsOf = (p: PartitionStats, stage: string): Set<string> => {
    const names = new Set<string>();
    for (const rec of p.samples.get(stage)?.items ?? [])
      for (const [k, v] of Object.entries(rec)) if (typeof v === 'number') names.add(k);
    return names;
  };
  const out = pairs.map(([sa, sb]) => {
    const fa = fieldsOf(pa, sa);
    const fb = fieldsOf(pb, sb);
    return specs.filter((sc) => fa.has(sc.fieldA) || fb.has(sc.fieldB));
  });
  for (const sc of specs) {
    if (out.some((list) => list.includes(sc))) continue;
    const known = [...new Set(pairs.flatMap(([sa]) => [...fieldsOf(pa, sa)]))].sort();
    const shown = known.slice(0, 25).join(', ') + (known.length > 25 ? `, ... (${known.length} in all)` : '');
    throw new BreError(
      'USAGE',
      `Expected --score ${sc.label} to name a numeric field of the compared stages (${pairs.map(([sa, sb]) => (sa === sb ? sa : `${sa}/${sb}`)).join(', ')}), got no such field; numeric fields: ${shown || 'none'}`,
      { field: 'score' },
    );
  }
  return out;
}

function movers(input: InputStabilityFigures | null, comparisons: readonly ComparisonJson[]): Mover[] {
  const all: { s: StabilityFigures; comparison: string | null }[] = [
    ...(input?.columns ?? []).map((s) => ({ s, comparison: null })),
    ...comparisons.flatMap((c) => (c.stability ?? []).map((s) => ({ s, comparison: c.label }))),
  ];
  const top = topMovers(all.map((x) => x.s));
  return top.map((s) => {
    const { comparison } = all.find((x) => x.s === s) as { comparison: string | null };
    return {
      name: s.name,
      source: s.source,
      comparison,
      baseline: s.baseline,
      period: s.latest?.period as string,
      psi: s.latest?.psi as number,
      band: s.latest?.band ?? null,
      noise: s.latest?.noise ?? null,
      p_value: s.latest?.p_value ?? null,
    };
  });
}

function binsFromSample(p: PartitionStats, stage: string): Map<string, FeatureBins> {
  const sample = p.samples.get(stage)?.items ?? [];
  const names = new Set<string>();
  for (const rec of sample) for (const k of Object.keys(rec)) names.add(k);
  const out = new Map<string, FeatureBins>();
  for (const name of [...names].sort()) out.set(name, featureBins(sample.map((r) => r[name])));
  return out;
}

function runSummary(run: RunFolder, p: PartitionStats, errors: ErrorCounts | null): RunSummary {
  return {
    dir: run.dir,
    pipeline: typeof run.manifest?.pipeline?.name === 'string' ? run.manifest.pipeline.name : null,
    results_rows: p.rows,
    malformed_lines: p.malformed,
    errors,
    stages: Object.fromEntries(p.stages),
  };
}

function csvHeader(comparisons: readonly Comparison[], o: ResolvedOptions, sampled: boolean): string[] {
  const h = ['key', 'a_row', 'b_row', 'match'];
  for (const c of comparisons) {
    if (!c.decisions) continue;
    const p = c.prefix;
    h.push(
      `${p}a_decision`,
      `${p}b_decision`,
      `${p}a_loan_amount`,
      `${p}b_loan_amount`,
      `${p}amount_change`,
      `${p}swap_class`,
    );
  }
  for (const c of comparisons) {
    for (const sc of c.risk.setup.scores) h.push(`${c.prefix}score_a.${sc.label}`, `${c.prefix}score_b.${sc.label}`);
  }
  if (o.outcome !== undefined) h.push('outcome');
  if (o.by !== undefined) h.push('segment');
  if (o.period !== undefined) h.push('period');
  if (sampled) h.push('stratum', 'weight');
  return h;
}

function stageResult(line: { stages: Record<string, unknown> } | null, id: string): NormalisedResult | undefined {
  const r = line?.stages[id];
  return r && typeof r === 'object' && !Array.isArray(r) ? (r as NormalisedResult) : undefined;
}

/** Decision cell of compare.csv: the category as the crosstab shows it; empty when that side has no line. */
function decisionCell(view: SideView | null): string {
  return view ? view.category : '';
}

function visitLine(
  line: JoinedLine,
  comparisons: readonly Comparison[],
  o: ResolvedOptions,
  columns: RowColumns | null,
  sameInput: boolean,
  sampling: Sampling | null,
): Json[] {
  // Input columns are joined by data row number: A's row, or B's for a line only in B when both ran on one input.
  const row = line.a ? line.a.row : sameInput ? (line.b?.row ?? null) : null;
  const segment = columns?.segment(row);
  const outcome = columns?.outcomeOf(row);
  const period = columns?.periodOf(row);
  const cells: Json[] = [line.key, line.a?.row ?? null, line.b?.row ?? null, line.match];
  const scores: (number | null)[] = [];
  // A compared key of a sample is a unit of its stratum (the same in both runs).
  const unit = sampling && line.match === 'matched' && line.a && line.b ? sampling.unitOf(line.a, line.b) : null;
  for (const c of comparisons) {
    const s = c.acc.setup;
    const ra = line.a ? stageResult(line.a, s.stageA) : undefined;
    const rb = line.b ? stageResult(line.b, s.stageB) : undefined;
    const va = line.a ? sideView(ra, o.product) : null;
    const vb = line.b ? sideView(rb, o.product) : null;
    const versionA = versionOfResult(ra);
    const versionB = versionOfResult(rb);
    c.versions.add(versionA, versionB);
    let swap: string = line.match;
    if (line.match === 'matched' && va && vb) {
      const cls = c.acc.add(va, vb, { segment: o.byVersion ? versionPair(versionA, versionB) : segment, outcome });
      if (cls) swap = cls;
      if (unit !== null) c.units?.add(unit, va, vb, outcome);
      scores.push(...c.risk.add(va, vb, cls, outcome, period));
    } else {
      scores.push(...scoreCells(c.risk.setup.scores, va, vb));
    }
    if (!c.decisions) continue;
    const change = va?.amount != null && vb?.amount != null ? vb.amount - va.amount : null;
    cells.push(decisionCell(va), decisionCell(vb), va?.amount ?? null, vb?.amount ?? null, change, swap);
  }
  cells.push(...scores);
  if (o.outcome !== undefined) cells.push(outcome ?? null);
  if (o.by !== undefined) cells.push(segment ?? null);
  if (o.period !== undefined) cells.push(period ?? null);
  if (sampling) {
    const side = line.a ?? line.b;
    cells.push(
      typeof side?.stratum === 'string' ? side.stratum : null,
      typeof side?.weight === 'number' ? side.weight : null,
    );
  }
  return cells;
}
