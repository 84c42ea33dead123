/** `run`'s options that choose the rows sent: a stratified sample, the first N rows, a shard of the keys. */
import { BreError } from '@bre-batch/core/errors';
import { parseShard } from '../../input/shard.js';
import { ALLOCATIONS } from '@bre-batch/formats/allocation';
import { DEFAULT_SEED, resolveSampleOptions, type SampleSpec } from '../../sample/design.js';
import type { Shard } from '../../pipeline/settings.js';
import { wholeNumber, type OptionFamily } from './family.js';

export interface SamplingArgs {
  input: string;
  sample?: string;
  'sample-share'?: string;
  'stratify-by'?: string[];
  seed?: string;
  'sample-allocation'?: string;
  limit?: unknown;
  shard?: string;
}

export const SAMPLING_OPTIONS = {
  title: 'Sampling:',
  options: {
    sample: {
      type: 'string',
      describe:
        'N: send only a stratified random sample of about N rows (see --stratify-by); each carries its stratum and design weight',
    },
    'sample-share': {
      type: 'string',
      describe: 'P (0 < P <= 1): send a sample of round(P x N_h) rows of every stratum (at least 2 where it has 2)',
    },
    'stratify-by': {
      type: 'string',
      array: true,
      defaultDescription: 'one stratum, the whole input',
      describe:
        'COL[:month|week|quarter][,COL...]: the strata of --sample / --sample-share (a date column grouped as compare --period does)',
    },
    seed: {
      type: 'string',
      defaultDescription: DEFAULT_SEED,
      describe: 'text that, with each row key, decides which rows a sample takes (recorded in manifest.json)',
    },
    'sample-allocation': {
      type: 'string',
      defaultDescription: ALLOCATIONS[0],
      describe: `with --sample N, one of ${ALLOCATIONS.join(', ')}: rows per stratum in proportion to its size, or the same count in every stratum`,
    },
    limit: { requiresArg: true, defaultDescription: 'every row', describe: 'N: only the first N data rows' },
    shard: { type: 'string', describe: 'K/N: only rows whose key hashes to shard K of N' },
  },
} as const satisfies OptionFamily;

export interface ResolvedSampling {
  readonly sample?: SampleSpec;
  readonly limit?: number;
  readonly shard?: Shard;
}

export function resolveSampling(a: SamplingArgs): ResolvedSampling {
  const limit = a.limit === undefined ? undefined : wholeNumber('limit', a.limit, { min: 0 });
  let shard: Shard | undefined;
  if (a.shard !== undefined) {
    try {
      shard = parseShard(a.shard);
    } catch (err) {
      throw new BreError('USAGE', (err as Error).message);
    }
  }
  const sample = resolveSampleOptions({
    sample: a.sample,
    sampleShare: a['sample-share'],
    stratifyBy: a['stratify-by'],
    seed: a.seed,
    allocation: a['sample-allocation'],
  });
  if (sample && a.input === '-')
    throw new BreError(
      'USAGE',
      'Expected --input to be a file with --sample or --sample-share, got - (stdin): the sample is drawn by reading the input before the run, which stdin allows only once',
      { field: 'input' },
    );
  return { ...(sample ? { sample } : {}), ...(limit !== undefined ? { limit } : {}), ...(shard ? { shard } : {}) };
}
