/** What `bre-batch compare` accepts, and its one resolution into a complete internal form. */
import { basename, dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { BreError } from '@bre-batch/core/errors';
import { INPUT_FORMATS, isInputFormat, type InputFormat } from '@bre-batch/formats/input/read';
import { DEFAULT_REPLICATES } from './design/bootstrap.js';
import { DEFAULT_MIN_PERIOD_KEYS } from './period/periods.js';
import { PERIOD_UNITS, type PeriodUnit } from '@bre-batch/formats/input/period';
import type { PeriodOptions } from './risk.js';
import { parseScoreSpecs, type ScoreSpec } from './score/spec.js';
import type { Product } from './side.js';

export interface CompareOptions {
  /** Output folder of run A (the champion / the baseline). */
  readonly outA: string;
  /** Output folder of run B (the challenger); may equal outA with stageA/stageB. */
  readonly outB: string;
  /**
   * Folder for compare.csv, compare.json, report.html. Default: a folder of its own beside run B,
   * `compare-<name of A>-vs-<name of B>`, or `compare-<name>-<stageA>-vs-<stageB>` beside the one folder when
   * both runs are the same (never inside a run's folder: that is the record of the run, which a comparison of
   * two runs is not; docs/decisions/compare-folder.md).
   */
  readonly out?: string;
  /** Compare only this stage id (present in both runs). Default: every stage id the two runs share. */
  readonly stage?: string;
  /** Compare stage `stageA` of A with stage `stageB` of B (both required together). */
  readonly stageA?: string;
  readonly stageB?: string;
  /** Input column holding the observed outcome, 1 = bad, 0 = good (anything else: unknown). */
  readonly outcome?: string;
  /** Input column to segment by. */
  readonly by?: string;
  /** Segment by the strategy versions that decided each key (A's → B's) instead of an input column. */
  readonly byVersion?: boolean;
  /**
   * Numeric result fields to assess as scores against the outcome (needs `outcome`): `FIELD` (the same field in
   * both stages) or `FIELD_A:FIELD_B`. Repeatable.
   */
  readonly score?: string | readonly string[];
  /** `NAME=higher` or `NAME=lower` per score: which end is the better applicant. Default: higher is better. */
  readonly scoreDirection?: string | readonly string[];
  /** `--score-missing -1,0`: values of every --score that mean no score (default -1; `none`). */
  readonly scoreMissing?: string | readonly string[];
  /** Input date column (e.g. application date): approvals, swaps, bad rates and stability per period. */
  readonly period?: string;
  /** Grouping of --period dates. Default month. */
  readonly periodUnit?: PeriodUnit;
  /** Periods with fewer compared keys than this are marked small. Default 30. */
  readonly minPeriodKeys?: number;
  /** Input file for --by/--outcome/--period; default: run A's manifest.json `input.path`. */
  readonly input?: string;
  /** Any format `run` reads (csv, tsv, ndjson, parquet, csv.gz...). Default: from the manifest, else from the file extension. */
  readonly inputFormat?: InputFormat;
  /** Text encoding of the input (--encoding). Default: the one run A read its input with (manifest.json), else UTF-8 (a byte order mark decides). */
  readonly encoding?: string;
  /** CSV separator of the input (--delimiter). Default: the one run A read its input with (manifest.json), else sniffed as `run` does. */
  readonly delimiter?: string;
  /** payday (Decision, LoanAmount) or emi (EmiDecision, best offer). Default payday. */
  readonly product?: Product;
  /** Hash buckets of the on-disk join. Default: one per 4 MiB of the larger results file (1 to 1024). */
  readonly buckets?: number;
  /** Where bucket files go (removed afterwards). Default: the OS temporary folder. */
  readonly tmpDir?: string;
  /** Rows of A sampled for the PSI bin edges (exact deciles up to this many rows). Default 10,000. */
  readonly sampleSize?: number;
  /** Most keys listed in compare.json for only-A, only-B and duplicates. Default 100. */
  readonly listCap?: number;
  /** Sampled runs: bootstrap replicates for the AUC, Gini and KS intervals (at least 100). Default 1,000. */
  readonly replicates?: number;
  /** Clock for compare.json's generated_at (tests). */
  readonly now?: () => Date;
}

interface StageChoice {
  /** Explicit pairs, or 'shared' = every stage both runs have, or 'champion-challenger' for one folder. */
  readonly mode: 'pair' | 'shared' | 'champion-challenger';
  readonly stageA?: string;
  readonly stageB?: string;
}

export interface ResolvedOptions {
  readonly outA: string;
  readonly outB: string;
  readonly sameFolder: boolean;
  readonly out: string;
  readonly stages: StageChoice;
  readonly outcome?: string;
  readonly by?: string;
  readonly byVersion: boolean;
  readonly scores: readonly ScoreSpec[];
  readonly period?: PeriodOptions;
  readonly input?: string;
  readonly inputFormat?: InputFormat;
  readonly encoding?: string;
  readonly delimiter?: string;
  readonly product: Product;
  readonly buckets?: number;
  readonly tmpDir: string;
  readonly sampleSize: number;
  readonly listCap: number;
  readonly replicates: number;
  readonly now: () => Date;
}

const DEFAULT_SAMPLE_SIZE = 10_000;
const DEFAULT_LIST_CAP = 100;
const MIN_REPLICATES = 100;
const BUCKET_TARGET_BYTES = 4 * 1024 * 1024;
const MAX_BUCKETS = 1024;

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new BreError('USAGE', `Expected ${flag} to be a non-empty name, got '${String(value)}'`, { field: flag });
  return value;
}

function positiveInt(value: number | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1)
    throw new BreError('USAGE', `Expected ${flag} to be a whole number of at least 1, got ${String(value)}`, {
      field: flag,
    });
  return value;
}

export function resolveCompareOptions(o: CompareOptions): ResolvedOptions {
  if (typeof o.outA !== 'string' || o.outA === '' || typeof o.outB !== 'string' || o.outB === '') {
    throw new BreError(
      'USAGE',
      `Expected two output folders <outA> <outB>, got '${String(o.outA ?? '')}' and '${String(o.outB ?? '')}'`,
    );
  }
  const outA = resolve(o.outA);
  const outB = resolve(o.outB);
  const sameFolder = outA === outB;
  const stage = nonEmpty(o.stage, '--stage');
  const stageA = nonEmpty(o.stageA, '--stage-a');
  const stageB = nonEmpty(o.stageB, '--stage-b');
  if (stage !== undefined && (stageA !== undefined || stageB !== undefined)) {
    throw new BreError('USAGE', 'Expected either --stage or --stage-a with --stage-b, got both', { field: 'stage' });
  }
  if ((stageA === undefined) !== (stageB === undefined)) {
    throw new BreError(
      'USAGE',
      `Expected --stage-a and --stage-b together, got only ${stageA !== undefined ? '--stage-a' : '--stage-b'}`,
      { field: stageA !== undefined ? 'stage-b' : 'stage-a' },
    );
  }
  let stages: StageChoice;
  if (stageA !== undefined && stageB !== undefined) stages = { mode: 'pair', stageA, stageB };
  else if (stage !== undefined) stages = { mode: 'pair', stageA: stage, stageB: stage };
  else
    stages = sameFolder
      ? { mode: 'champion-challenger', stageA: 'champion', stageB: 'challenger' }
      : { mode: 'shared' };
  if (sameFolder && stages.mode === 'pair' && stages.stageA === stages.stageB) {
    throw new BreError(
      'USAGE',
      `Expected two different stages (--stage-a, --stage-b) when both runs are the same folder, got '${stages.stageA}' twice`,
      { field: 'stage-b' },
    );
  }
  const product = o.product ?? 'payday';
  if (product !== 'payday' && product !== 'emi')
    throw new BreError('USAGE', `Expected --product payday or emi, got '${String(product)}'`, { field: 'product' });
  if (o.inputFormat !== undefined && !isInputFormat(o.inputFormat)) {
    throw new BreError(
      'USAGE',
      `Expected --input-format to be one of ${INPUT_FORMATS.join(', ')}, got '${String(o.inputFormat)}'`,
      { field: 'input-format' },
    );
  }
  const outcome = nonEmpty(o.outcome, '--outcome');
  const scores = parseScoreSpecs(o.score, o.scoreDirection, o.scoreMissing);
  if (scores.length > 0 && outcome === undefined) {
    throw new BreError(
      'USAGE',
      `Expected --outcome COLUMN with --score (the power of a score is measured against observed outcomes), got --score ${scores[0].label} alone`,
      { field: 'outcome' },
    );
  }
  const period = resolvePeriod(o);
  const defaultOut = sameFolder
    ? join(
        dirname(outA),
        `compare-${basename(outA)}-${stages.stageA ?? 'champion'}-vs-${stages.stageB ?? 'challenger'}`,
      )
    : join(dirname(outB), `compare-${basename(outA)}-vs-${basename(outB)}`);
  return {
    outA,
    outB,
    sameFolder,
    out: resolve(o.out ?? defaultOut),
    stages,
    outcome,
    by: nonEmpty(o.by, '--by'),
    byVersion: byVersionOf(o),
    scores,
    period,
    input: o.input === undefined ? undefined : resolve(nonEmpty(o.input, '--input') as string),
    inputFormat: o.inputFormat,
    encoding: nonEmpty(o.encoding, '--encoding'),
    delimiter: nonEmpty(o.delimiter, '--delimiter'),
    product,
    buckets: positiveInt(o.buckets, '--buckets'),
    tmpDir: o.tmpDir ?? tmpdir(),
    sampleSize: positiveInt(o.sampleSize, 'sampleSize') ?? DEFAULT_SAMPLE_SIZE,
    listCap: positiveInt(o.listCap, 'listCap') ?? DEFAULT_LIST_CAP,
    replicates: replicatesOf(o.replicates),
    now: o.now ?? (() => new Date()),
  };
}

function replicatesOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_REPLICATES;
  if (!Number.isInteger(value) || value < MIN_REPLICATES) {
    throw new BreError(
      'USAGE',
      `Expected --replicates to be a whole number of at least ${MIN_REPLICATES}, got ${String(value)}`,
      { field: 'replicates' },
    );
  }
  return value;
}

function resolvePeriod(o: CompareOptions): PeriodOptions | undefined {
  const column = nonEmpty(o.period, '--period');
  if (column === undefined) {
    if (o.periodUnit !== undefined || o.minPeriodKeys !== undefined) {
      throw new BreError(
        'USAGE',
        `Expected --period COLUMN with ${o.periodUnit !== undefined ? '--period-unit' : '--min-period-keys'}, got no --period`,
        { field: 'period' },
      );
    }
    return undefined;
  }
  const unit = o.periodUnit ?? 'month';
  if (!(PERIOD_UNITS as readonly string[]).includes(unit)) {
    throw new BreError('USAGE', `Expected --period-unit ${PERIOD_UNITS.join(', ')}, got '${String(unit)}'`, {
      field: 'period-unit',
    });
  }
  return { column, unit, minKeys: positiveInt(o.minPeriodKeys, '--min-period-keys') ?? DEFAULT_MIN_PERIOD_KEYS };
}

export function autoBuckets(largestBytes: number): number {
  return Math.min(MAX_BUCKETS, Math.max(1, Math.ceil(largestBytes / BUCKET_TARGET_BYTES)));
}

/** --by-version: one segmentation at a time, so not with --by. */
function byVersionOf(o: CompareOptions): boolean {
  if (o.byVersion === true && o.by !== undefined)
    throw new BreError('USAGE', `Expected --by or --by-version, not both, got --by ${o.by} --by-version`, {
      field: 'by-version',
    });
  return o.byVersion === true;
}
