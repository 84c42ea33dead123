/** manifest.json: what an output folder was made from, so that a resume cannot mix inputs or pipelines. */
import { join } from 'node:path';
import { z } from 'zod';
import { BreError } from '../../errors.js';
import { FILES } from './files.js';
import { readJsonFile, writeJsonFile } from './json-file.js';

export const sourceSchema = z.object({
  url: z.string(),
  table: z.string().nullable(),
  query: z.string().nullable(),
});
export type ManifestSource = z.infer<typeof sourceSchema>;

export const manifestSchema = z.looseObject({
  version: z.literal(1),
  tool: z.literal('bre-batch'),
  pipeline: z.object({ name: z.string(), path: z.string(), sha256: z.string() }),
  /** path '-' with size and sha256 null: stdin. */
  input: z.object({
    path: z.string(), format: z.string(), size: z.number().nullable(), sha256: z.string().nullable(),
    /**
     * How the rows were read: the encoding decoded (a byte order mark's, --encoding's, else utf-8; null for
     * Parquet), the CSV separator used (given or sniffed; null but for CSV and TSV), and --decimal-comma.
     * Absent in folders made before it was recorded.
     */
    reading: z.object({ encoding: z.string().nullable(), delimiter: z.string().nullable(), decimal_comma: z.boolean() }).optional(),
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
  /** A merged folder: the shard folders it was made from. */
  merged_from: z.array(z.object({ dir: z.string(), shard: z.string().nullable() })).optional(),
});
export type Manifest = z.infer<typeof manifestSchema>;

/** The folder's manifest; undefined when it has none; OUTPUT_MISMATCH when it is damaged. */
export function readManifest(dir: string): Manifest | undefined {
  const path = join(dir, FILES.manifest);
  const read = readJsonFile(path, manifestSchema);
  if (read.state === 'absent') return undefined;
  if (read.state === 'invalid') throw new BreError('OUTPUT_MISMATCH', `${path} is not a bre-batch manifest (${read.problem}): the output folder is damaged; choose another --out`);
  return read.value;
}

export function writeManifest(dir: string, manifest: Manifest): void {
  writeJsonFile(join(dir, FILES.manifest), manifest);
}
