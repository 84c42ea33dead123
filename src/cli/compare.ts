/**
 * `bre-batch compare <outA> <outB>`: option parsing only; the work is back-testing's (packages/backtest).
 * Exit 0 when the three files were written; 2 for usage or configuration (missing folder, unknown stage,
 * --outcome / --by column not in the input): src/cli/main.ts maps a thrown BreError to 2.
 */
import type { CommandModule } from 'yargs';
import { runCompare, type CompareJson, type CompareOptions, type Estimate, type Product } from '@bre-batch/backtest';
import type { PeriodUnit } from '@bre-batch/formats/input/period';
import { INPUT_FORMATS, type InputFormat } from '@bre-batch/formats/input/read';

interface CompareArgs {
  outA: string;
  outB: string;
  out?: string;
  stage?: string;
  'stage-a'?: string;
  'stage-b'?: string;
  outcome?: string;
  by?: string;
  'by-version'?: boolean;
  score?: string[];
  'score-direction'?: string[];
  'score-missing'?: string[];
  period?: string;
  'period-unit'?: string;
  'min-period-keys'?: number;
  input?: string;
  'input-format'?: string;
  encoding?: string;
  delimiter?: string;
  product: string;
  buckets?: number;
  replicates?: number;
}

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)}%`;
}

/** A few lines a person reads in the terminal; compare.json has everything. */
function formatCompareSummary(r: CompareJson, files: { csv: string; json: string; html: string }): string {
  const j = r.join;
  const lines = [
    `compared ${j.matched} keys; only in A ${j.only_a}, only in B ${j.only_b}, duplicate keys ${j.duplicates.keys}, rows without key ${j.no_key.a_rows + j.no_key.b_rows}`,
  ];
  if (r.sample) lines.push(...sampleLines(r));
  for (const c of r.comparisons) {
    const name = c.stage_a === c.stage_b ? c.stage_a : `${c.stage_a} vs ${c.stage_b}`;
    for (const note of c.versions?.notes ?? []) lines.push(`  ${name}: WARNING: ${note}`);
    if (r.sample)
      lines.push(
        `  ${name} (sample only, unweighted: the figures below describe the ${r.sample.compared} sampled keys, not the population):`,
      );
    if (!c.approval || !c.swaps) {
      const shifted = c.features.filter((f) => f.band === 'major' || f.band === 'moderate').length;
      lines.push(`  ${name}: features only; ${shifted} of ${c.features.length} features with PSI >= 0.1`);
      continue;
    }
    const a = c.approval;
    const ci = a.difference_ci ? ` [${pct(a.difference_ci.lower)}, ${pct(a.difference_ci.upper)}]` : '';
    lines.push(
      `  ${name}: approval A ${pct(a.a.rate)}, B ${pct(a.b.rate)}, B-A ${pct(a.difference)}${ci}; swap-in ${c.swaps.swap_in}, swap-out ${c.swaps.swap_out}`,
    );
    for (const s of c.scores ?? []) {
      const gini = (g: number | null | undefined): string => (g === null || g === undefined ? '–' : g.toFixed(3));
      const p = s.paired;
      const test = !p
        ? 'no paired test'
        : p.identical
          ? 'same values in A and B'
          : p.p_value === null
            ? 'no test (se 0)'
            : `paired DeLong p=${p.p_value.toPrecision(2)}`;
      lines.push(
        `    score ${s.label}: Gini A ${gini(s.a.power?.gini)}, B ${gini(s.b.power?.gini)}; ${test}; missing A ${s.a.missing.keys}, B ${s.b.missing.keys}; no-score markers A ${s.a.no_score.keys}, B ${s.b.no_score.keys}`,
      );
    }
    if (c.periods)
      lines.push(
        `    ${c.periods.periods.length} periods by ${c.periods.unit} (${c.periods.periods.filter((p) => p.small).length} small)`,
      );
  }
  lines.push(`wrote ${files.csv}`, `wrote ${files.json}`, `wrote ${files.html}`);
  return lines.join('\n') + '\n';
}

function est(e: Estimate | null | undefined, as: (x: number) => string): string {
  if (!e) return '–';
  return e.ci ? `${as(e.estimate)} [${as(e.ci.lower)}, ${as(e.ci.upper)}]` : `${as(e.estimate)} (no interval)`;
}

/** The population estimates of a sampled comparison, first: they are what the sample is for. */
function sampleLines(r: CompareJson): string[] {
  const s = r.sample as NonNullable<CompareJson['sample']>;
  const missing =
    s.not_compared > 0 ? `; ${s.not_compared} sampled keys not compared (failed or missing), left out` : '';
  const lines = [
    `${s.notice} (stratified by ${s.design.stratify_by.map((x) => (x.group ? `${x.column}:${x.group}` : x.column)).join(', ')}, seed ${s.design.seed}): ${s.compared} sampled keys compared${missing}; 95% intervals`,
  ];
  const count = (x: number): string => Math.round(x).toLocaleString('en-US');
  for (const c of r.comparisons) {
    const e = c.estimates;
    if (!e) continue;
    const name = c.stage_a === c.stage_b ? c.stage_a : `${c.stage_a} vs ${c.stage_b}`;
    if (e.approval && e.swaps) {
      lines.push(
        `  ${name} estimates: approval A ${est(e.approval.a, pct)}, B ${est(e.approval.b, pct)}, B-A ${est(e.approval.difference, pct)}; swap-in ${est(e.swaps.swap_in.count, count)}, swap-out ${est(e.swaps.swap_out.count, count)}`,
      );
    }
    if (e.bad_rates)
      lines.push(
        `    bad rate of the approved: A ${est(e.bad_rates.a_approved.bad_rate, pct)}, B ${est(e.bad_rates.b_approved.bad_rate, pct)}`,
      );
    for (const sc of e.scores ?? [])
      lines.push(
        `    score ${sc.label}: AUC A ${est(sc.a.auc, (x) => x.toFixed(3))}, B ${est(sc.b.auc, (x) => x.toFixed(3))}`,
      );
  }
  return lines;
}

export function compareOptionsFromArgs(a: CompareArgs): CompareOptions {
  return {
    outA: a.outA,
    outB: a.outB,
    out: a.out,
    stage: a.stage,
    stageA: a['stage-a'],
    stageB: a['stage-b'],
    outcome: a.outcome,
    by: a.by,
    byVersion: a['by-version'],
    score: a.score,
    scoreDirection: a['score-direction'],
    scoreMissing: a['score-missing'],
    period: a.period,
    periodUnit: a['period-unit'] as PeriodUnit | undefined,
    minPeriodKeys: a['min-period-keys'],
    input: a.input,
    inputFormat: a['input-format'] as InputFormat | undefined,
    encoding: a.encoding,
    delimiter: a.delimiter,
    product: a.product as Product,
    buckets: a.buckets,
    replicates: a.replicates,
  };
}

export const compareCommand: CommandModule<object, CompareArgs> = {
  command: 'compare <outA> <outB>',
  describe: 'back-test two runs over the same rows: compare.csv, compare.json and report.html',
  builder: (y) =>
    y
      .positional('outA', { type: 'string', demandOption: true, describe: 'output folder of run A (champion)' })
      .positional('outB', {
        type: 'string',
        demandOption: true,
        describe: 'output folder of run B (challenger); the same folder with --stage-a/--stage-b',
      })
      .option('out', {
        type: 'string',
        describe:
          "folder for the three files (default: a folder of its own beside outB, compare-<name of outA>-vs-<name of outB>; one folder: compare-<its name>-<stageA>-vs-<stageB> beside it; never inside a run's folder)",
      })
      .option('stage', { type: 'string', describe: 'compare only this stage id (default: every stage both runs have)' })
      .option('stage-a', {
        type: 'string',
        describe: "stage of run A to compare (with --stage-b); default 'champion' when both folders are the same",
      })
      .option('stage-b', {
        type: 'string',
        describe: "stage of run B to compare (with --stage-a); default 'challenger' when both folders are the same",
      })
      .option('outcome', {
        type: 'string',
        describe: 'input column with the observed outcome, 1 = bad, 0 = good: bad rates of the approved and swap sets',
      })
      .option('by', { type: 'string', describe: 'input column to segment by (e.g. state)' })
      .option('by-version', {
        type: 'boolean',
        describe:
          "segment by the strategy versions that decided each key (A's version → B's), instead of an input column",
      })
      .option('score', {
        type: 'string',
        array: true,
        describe: 'numeric result field to assess as a score against --outcome: FIELD, or FIELD_A:FIELD_B (repeatable)',
      })
      .option('score-direction', {
        type: 'string',
        array: true,
        describe: 'NAME=higher or NAME=lower: which end of a --score is the better applicant (default higher)',
      })
      .option('score-missing', {
        type: 'string',
        array: true,
        describe:
          "values of a --score that mean no score (the bureaus' no-history marker), counted apart from the deciles and the cut-off table; comma-separated, or none (default -1)",
      })
      .option('period', {
        type: 'string',
        describe: 'input date column (e.g. application_date): vintages and stability per period',
      })
      .option('period-unit', {
        type: 'string',
        choices: ['month', 'week', 'quarter'],
        describe: 'grouping of --period dates (default month)',
      })
      .option('min-period-keys', {
        type: 'number',
        describe: 'periods with fewer compared keys are marked small (default 30)',
      })
      .option('input', {
        type: 'string',
        describe: "input file for --outcome/--by/--period (default: run A's input from its manifest.json)",
      })
      .option('input-format', {
        type: 'string',
        choices: [...INPUT_FORMATS],
        describe: "format of --input, any that run reads (default: run A's, or from the extension)",
      })
      .option('encoding', {
        type: 'string',
        describe: 'text encoding of the input, e.g. windows-1252 (default: the one run A read it with, else UTF-8)',
      })
      .option('delimiter', {
        type: 'string',
        describe: 'CSV field separator of the input (default: the one run A read it with, else sniffed as run does)',
      })
      .option('product', {
        type: 'string',
        choices: ['payday', 'emi'],
        default: 'payday',
        describe: 'payday: decision and loan_amount; emi: emi_decision and the best offer amount',
      })
      .option('buckets', {
        type: 'number',
        describe: 'hash buckets of the on-disk join (default: one per 4 MiB of results)',
      })
      .option('replicates', {
        type: 'number',
        describe: 'sampled runs: bootstrap replicates of the AUC, Gini and KS intervals (default 1000, at least 100)',
      }) as never,
  handler: async (argv) => {
    const result = await runCompare(compareOptionsFromArgs(argv));
    process.stdout.write(formatCompareSummary(result.report, result.files));
    process.exitCode = 0;
  },
};
