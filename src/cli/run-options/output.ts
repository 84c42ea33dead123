/** `run`'s output options: the folder, the formats rebuilt at the end, masking, and retrying an earlier run's errors. */
import { join } from 'node:path';
import { BreError } from '../../errors.js';
import { OUTPUT_FORMATS, parseOutputFormats } from '../../output/rebuild.js';
import type { OptionFamily } from './family.js';

export interface OutputArgs {
  out?: string;
  'output-formats'?: string;
  'keep-personal-data': boolean;
  'retry-errors': boolean;
}

export const OUTPUT_OPTIONS = {
  title: 'Output:',
  options: {
    out: { type: 'string', defaultDescription: 'output/<pipeline>-<UTC timestamp>', describe: 'output folder; the same --out resumes' },
    'output-formats': { type: 'string', defaultDescription: OUTPUT_FORMATS.join(','), describe: `formats of the files rebuilt at the end: ${OUTPUT_FORMATS.join(', ')} or ${OUTPUT_FORMATS.join(',')}` },
    'keep-personal-data': { type: 'boolean', default: false, describe: 'do not mask personal data in errors.ndjson and logs (only for a secure location)' },
    'retry-errors': { type: 'boolean', default: false, describe: 'with --out of an earlier run: run again only the rows in its errors file' },
  },
} as const satisfies OptionFamily;

export interface ResolvedOutput {
  readonly outDir: string;
  readonly outputFormats: Set<'csv' | 'parquet'>;
  readonly keepPersonalData: boolean;
  readonly retryErrors: boolean;
}

/** `20260126T081500Z`: sorts as time does, and is a valid folder name everywhere. */
function utcStamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

export function resolveOutput(a: OutputArgs, pipelineName: string, now: () => Date): ResolvedOutput {
  if (a['retry-errors'] && !a.out) throw new BreError('USAGE', '--retry-errors needs --out DIR: the folder of the run whose errors to retry');
  return {
    outDir: a.out ?? join('output', `${pipelineName}-${utcStamp(now())}`),
    outputFormats: parseOutputFormats(a['output-formats']),
    keepPersonalData: a['keep-personal-data'],
    retryErrors: a['retry-errors'],
  };
}
