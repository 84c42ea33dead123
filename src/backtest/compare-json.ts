/** compare.json: the figures of a back-test, written by ./compare.ts and drawn by ./report.ts. */
import type { ComparisonFigures } from './comparison.js';
import type { ErrorCounts } from './folder.js';
import type { StageInfo } from './partition.js';
import type { Product } from './side.js';

export interface RunSummary {
  readonly dir: string;
  readonly pipeline: string | null;
  /** Valid results lines. */
  readonly results_rows: number;
  readonly malformed_lines: number;
  readonly errors: ErrorCounts | null;
  readonly stages: Readonly<Record<string, StageInfo>>;
}

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
    readonly input: string | null;
    readonly buckets: number;
    readonly sample_size: number;
  };
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
  readonly comparisons: readonly ComparisonFigures[];
  readonly methods: Readonly<Record<string, string>>;
}
