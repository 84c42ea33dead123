/** Types of ./convert-samples.mjs (a plain script, runnable with `node`). */
export declare const SAMPLES: string;
export interface ConvertedSample {
  /** The shipped sample (CSV or NDJSON). */
  readonly sample: string;
  readonly parquet: string;
  /** The sample gzip'ed: <name>.csv.gz or <name>.ndjson.gz. */
  readonly gz: string;
}
export declare function writeParquetRows(path: string, rows: readonly Record<string, unknown>[], opts?: { csv?: boolean; rowGroupSize?: number }): void;
export declare function convertSample(samplePath: string, outDir: string): { parquet: string; gz: string };
export declare function convertSamples(outDir: string): Record<string, ConvertedSample>;
