/** compare.json: the figures of a back-test, written by ./compare.ts and drawn by ./report.ts. */
import type { ComparisonFigures } from './comparison.js';
import type { ErrorCounts } from './folder.js';
import type { StageInfo } from './partition.js';
import type { RiskFigures } from './risk.js';
import type { SampleEstimates } from './sampled/estimates.js';
import type { SampleSummary } from './sampled/sampling.js';
import type { Product } from './side.js';
import type { InputStabilityFigures } from './stability/input.js';
import type { Mover } from './stability/over-time.js';
import type { VersionFigures } from './versions.js';

export interface RunSummary {
  readonly dir: string;
  readonly pipeline: string | null;
  /** Valid results lines. */
  readonly results_rows: number;
  readonly malformed_lines: number;
  readonly errors: ErrorCounts | null;
  readonly stages: Readonly<Record<string, StageInfo>>;
}

/**
 * One comparison in compare.json: the decision figures and the credit-risk figures, over the compared keys; on
 * sampled runs those describe the sample only, and `estimates` holds the population estimates (null otherwise).
 */
export type ComparisonJson = ComparisonFigures &
  RiskFigures & {
    /** What the figures outside `estimates` count: the sampled keys unweighted ('sample'), or every compared key. */
    readonly basis: 'sample' | 'all compared keys';
    readonly estimates: SampleEstimates | null;
    /** The strategy versions that decided each side (./versions.ts); null when no result names one. */
    readonly versions: VersionFigures | null;
  };

export interface CompareJson {
  readonly version: 1;
  readonly generated_at: string;
  readonly a: RunSummary;
  readonly b: RunSummary;
  readonly options: {
    readonly product: Product;
    readonly decision_field: string;
    readonly amount_field: string;
    readonly outcome: string | null;
    readonly by: string | null;
    /** --by-version: the segments are the pairs of strategy versions (A's → B's), not an input column. */
    readonly by_version: boolean;
    readonly scores: readonly {
      readonly label: string;
      readonly field_a: string;
      readonly field_b: string;
      readonly direction: string;
    }[];
    readonly period: { readonly column: string; readonly unit: string; readonly min_keys: number } | null;
    readonly input: string | null;
    readonly buckets: number;
    readonly sample_size: number;
    /** Bootstrap replicates of the AUC and KS intervals of a sampled comparison; null for runs that are not samples. */
    readonly replicates: number | null;
  };
  /** The sample design and the rows not compared, when the runs are a sample; null otherwise. */
  readonly sample: SampleSummary | null;
  readonly join: {
    readonly matched: number;
    readonly only_a: number;
    readonly only_b: number;
    readonly only_a_keys: readonly string[];
    readonly only_b_keys: readonly string[];
    readonly duplicates: {
      readonly keys: number;
      readonly a_keys: number;
      readonly b_keys: number;
      readonly a_rows: number;
      readonly b_rows: number;
      readonly sample: readonly string[];
    };
    readonly no_key: { readonly a_rows: number; readonly b_rows: number };
    readonly list_cap: number;
  };
  readonly comparisons: readonly ComparisonJson[];
  /** CSI of the input columns over periods (--period); null without --period. */
  readonly input_stability: InputStabilityFigures | null;
  /** The 10 input columns and numeric result fields with the largest latest PSI against the baseline period. */
  readonly stability_top_movers: readonly Mover[] | null;
  readonly methods: Readonly<Record<string, string>>;
}
