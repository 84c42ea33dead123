/**
 * `run`'s output options: the folder, the formats rebuilt at the end, masking, retrying an earlier run's errors,
 * and keeping a finished run's journal uncompressed.
 */
import { BreError } from '@bre-batch/core/errors';
import { OUTPUT_FORMATS, parseOutputFormats } from '../../output/spool/output-formats.js';
import { CHUNK_ROWS_VARIABLE, chunkRowsOf } from '../../output/spool/chunk-rows.js';
import type { OptionFamily } from './family.js';

export interface OutputArgs {
  out?: string;
  'output-formats'?: string;
  'keep-personal-data': boolean;
  'retry-errors': boolean;
  'keep-journal': boolean;
}

export const OUTPUT_OPTIONS = {
  title: 'Output:',
  options: {
    out: {
      type: 'string',
      defaultDescription: 'output/<pipeline>-<UTC timestamp>, or the unfinished one of the same run',
      describe: 'output folder; the same --out resumes, and so does the same command without it',
    },
    'output-formats': {
      type: 'string',
      defaultDescription: OUTPUT_FORMATS.join(','),
      describe: `formats of the files rebuilt at the end: ${OUTPUT_FORMATS.join(', ')} or ${OUTPUT_FORMATS.join(',')}`,
    },
    'keep-personal-data': {
      type: 'boolean',
      default: false,
      describe: 'do not mask personal data in errors.ndjson and logs (only for a secure location)',
    },
    'retry-errors': {
      type: 'boolean',
      default: false,
      describe: 'with --out of an earlier run: run again only the rows in its errors file',
    },
    'keep-journal': {
      type: 'boolean',
      default: false,
      describe:
        "keep a finished run's journal (results.ndjson, errors.ndjson, ...) uncompressed instead of gzip'ing it",
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedOutput {
  /** --out; undefined: the default folder, chosen where the run starts (src/pipeline/default-folder.ts). */
  readonly out: string | undefined;
  readonly outputFormats: Set<'csv' | 'parquet'>;
  readonly keepPersonalData: boolean;
  readonly retryErrors: boolean;
  /** --keep-journal: a finished run's journal is left as it is (src/output/journal/compact.ts). */
  readonly keepJournal: boolean;
  /** BRE_ROW_GROUP_ROWS, from the environment: rows a row group of results.parquet holds (undefined: 10,000). */
  readonly rowGroupRows?: number;
}

/**
 * `job`: run --job, whose worker writes a folder of its own each session (its --retry-errors is the job's).
 * `env`: the environment, for BRE_ROW_GROUP_ROWS.
 */
export function resolveOutput(
  a: OutputArgs,
  job = false,
  env: Readonly<Record<string, string | undefined>> = {},
): ResolvedOutput {
  const rowGroupRows = chunkRowsOf(env[CHUNK_ROWS_VARIABLE]);
  if (a['retry-errors'] && !a.out && !job)
    throw new BreError('USAGE', '--retry-errors needs --out DIR: the folder of the run whose errors to retry');
  return {
    out: a.out,
    outputFormats: parseOutputFormats(a['output-formats']),
    keepPersonalData: a['keep-personal-data'],
    retryErrors: a['retry-errors'] && !job,
    keepJournal: a['keep-journal'],
    ...(rowGroupRows ? { rowGroupRows } : {}),
  };
}
