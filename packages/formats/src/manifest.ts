/** manifest.json: what an output folder was made from, so that a resume cannot mix inputs or pipelines. */
import { join } from 'node:path';
import { z } from 'zod';
import { BreError } from '@bre-batch/core/errors';
import { PERIOD_UNITS, type PeriodUnit } from './input/period.js';
import { FILES } from './files.js';
import { readJsonFile, writeJsonFile } from './json-file.js';
import { ALLOCATIONS, type Allocation } from './allocation.js';

const whole = z.number().int().nonnegative();

/** One column of --stratify-by: its values as they are, or a date grouped by month, week or quarter. */
export interface StratifyColumn {
  readonly column: string;
  readonly group: PeriodUnit | null;
}

/** One stratum as manifest.json and summary.json record it: N_h is `population`, n_h `sample`. */
export interface StratumRecord {
  readonly name: string;
  readonly values: (string | null)[];
  readonly population: number;
  readonly sample: number;
}

/** manifest.json's `sample` (the interface shared with `compare`'s estimators); plain arrays, as JSON reads back. */
export interface SampleDesign {
  readonly seed: string;
  readonly method: string;
  readonly stratify_by: StratifyColumn[];
  readonly allocation: Allocation;
  readonly size: number | null;
  readonly share: number | null;
  /** Rows in the strata (rows without a key are in none). */
  readonly population: number;
  readonly sampled: number;
  readonly strata: StratumRecord[];
}

/**
 * The design of a sampled run (`run --sample`; src/sample/draw.ts writes it, `compare` estimates from it).
 * A stratum's `population` is N_h, `sample` n_h; `values` are exact (null: missing), `name` is for display.
 */
export const sampleDesignSchema = z.object({
  seed: z.string(),
  method: z.string(),
  stratify_by: z.array(z.object({ column: z.string(), group: z.enum(PERIOD_UNITS).nullable() })),
  allocation: z.enum(ALLOCATIONS),
  /** --sample N, or null; --sample-share P, or null: exactly one is set. */
  size: z.number().int().positive().nullable(),
  share: z.number().positive().max(1).nullable(),
  /** Rows in the strata (ΣN_h) and in the sample (Σn_h). */
  population: whole,
  sampled: whole,
  /** A stratum exists because rows fell in it: N_h ≥ 1 (the estimators divide by it). */
  strata: z.array(
    z.object({
      name: z.string(),
      values: z.array(z.string().nullable()),
      population: z.number().int().positive(),
      sample: whole,
    }),
  ),
});
/** The schema reads what src/sample/draw.ts writes, a SampleDesign (checked when compiling). */
type Reads<T extends SampleDesign> = T;
export type ManifestSample = Reads<z.infer<typeof sampleDesignSchema>>;
const sourceSchema = z.object({
  url: z.string(),
  table: z.string().nullable(),
  query: z.string().nullable(),
});

/** One session of the run (src/output/audit.ts): who ran it where, and how it ended. */
const sessionSchema = z.looseObject({
  session: whole,
  started_at: z.string(),
  host: z.string(),
  user: z.string(),
  pid: whole,
  tool_version: z.string(),
  /** The options in effect (src/pipeline/effective-options.ts): never a secret. */
  options: z.record(z.string(), z.unknown()),
  /** Rows done (results and errors) in this session; null when unknown (a killed session's, with another killed before it). */
  rows: whole.nullable(),
  /** A session that ended: when, and its exit code. A killed one has neither and says `killed`. */
  ended_at: z.string().optional(),
  exit_code: z.number().int().optional(),
  killed: z.boolean().optional(),
});
export type ManifestSession = z.infer<typeof sessionSchema>;

/** A file of the folder as it was left at a session's end: its size and sha256. */
const fileRecordSchema = z.object({ size: whole, sha256: z.string() });

/** The output files as the last session that wrote them left them (`bre-batch verify` checks them). */
const outputsSchema = z.object({
  recorded_at: z.string(),
  session: whole,
  files: z.record(z.string(), fileRecordSchema),
});

export const manifestSchema = z.looseObject({
  version: z.literal(1),
  tool: z.literal('bre-batch'),
  pipeline: z.object({ name: z.string(), path: z.string(), sha256: z.string() }),
  /** path '-' with size and sha256 null: stdin. */
  input: z.object({
    path: z.string(),
    format: z.string(),
    size: z.number().nullable(),
    sha256: z.string().nullable(),
    /**
     * How the rows were read: the encoding decoded (a byte order mark's, --encoding's, else utf-8; null for
     * Parquet), the CSV separator used (given or sniffed; null but for CSV and TSV), and --decimal-comma.
     * Absent in folders made before it was recorded.
     */
    reading: z
      .object({ encoding: z.string().nullable(), delimiter: z.string().nullable(), decimal_comma: z.boolean() })
      .optional(),
    /**
     * The files root rows' file columns were read inside (src/input/files-root.ts): its real path, null when
     * there was none (stdin without --files-root); `given` when --files-root named it, not the input's folder.
     * Absent in folders made before it was recorded.
     */
    files_root: z.object({ path: z.string().nullable(), given: z.boolean() }).optional(),
    /**
     * A database input (`--input postgres://...`; `path` is then the URL too and `format` the dialect): the URL
     * without its password (nor its parameters), and the table (as --table names it) or the query's text.
     */
    source: sourceSchema.optional(),
  }),
  /** The row key column. */
  key: z.string(),
  /** `K/N` of a `--shard` run; null otherwise (and in a merged folder). */
  shard: z.string().nullable(),
  limit: z.number().nullable(),
  created_at: z.string(),
  /** A sampled run (`--sample`, `--sample-share`): its design; absent otherwise. */
  sample: sampleDesignSchema.optional(),
  /**
   * The run's id (src/output/audit.ts): made by the folder's first session, kept by every resume, and carried by
   * every row a session writes (`run_id`, with the session's number as `run_session`). Absent in folders made
   * before it was recorded (until their next session) and in a merged folder (its rows keep their shards').
   */
  run_id: z.string().optional(),
  /** A merged folder: the shard folders it was made from, each with its run's id (absent for an older shard). */
  merged_from: z
    .array(z.object({ dir: z.string(), shard: z.string().nullable(), run_id: z.string().optional() }))
    .optional(),
  /** The bre-batch that made the folder (each session records its own); absent in older folders. */
  tool_version: z.string().optional(),
  /** Every session, in order; absent in folders made before they were recorded. */
  sessions: z.array(sessionSchema).optional(),
  outputs: outputsSchema.optional(),
});
export type Manifest = z.infer<typeof manifestSchema>;

/** The folder's manifest; undefined when it has none; OUTPUT_MISMATCH when it is damaged. */
export function readManifest(dir: string): Manifest | undefined {
  const path = join(dir, FILES.manifest);
  const read = readJsonFile(path, manifestSchema);
  if (read.state === 'absent') return undefined;
  if (read.state === 'invalid')
    throw new BreError(
      'OUTPUT_MISMATCH',
      `${path} is not a bre-batch manifest (${read.problem}): the output folder is damaged; choose another --out`,
    );
  return read.value;
}

export function writeManifest(dir: string, manifest: Manifest): void {
  writeJsonFile(join(dir, FILES.manifest), manifest);
}
