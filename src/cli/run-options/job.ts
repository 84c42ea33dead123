/**
 * `run --job NAME` and its options (issue: elastic workers): join a job shared by several hosts, its chunks
 * and leases in the sink's database (PostgreSQL, MySQL or MariaDB). Shown with the run-control options of
 * `run --help`.
 */
import { BreError } from '@bre-batch/core/errors';
import { parseDuration } from '@bre-batch/core/units';
import type { JobSettings } from '../../pipeline/settings.js';
import { wholeNumber, type OptionFamily, type OptionsContext } from './family.js';

export interface JobArgs {
  job?: string;
  'job-lease': string;
  'job-heartbeat': string;
  'job-chunk-rows': unknown;
  sink?: string;
  shard?: string;
  sample?: string;
  'sample-share'?: string;
  limit?: unknown;
  input: string;
  'retry-errors': boolean;
}

export const JOB_OPTIONS = {
  title: 'Run control:',
  options: {
    job: {
      type: 'string',
      describe:
        'NAME: join the job NAME as one of its workers (with a --sink, whose database holds the job): claim chunks of the input, take over those of dead workers; every host runs the same command',
    },
    'job-lease': {
      type: 'string',
      default: '60s',
      describe:
        'with --job: how long a chunk stays with a worker that stopped renewing it (killed, partitioned, stalled) before another takes it over',
    },
    'job-heartbeat': {
      type: 'string',
      default: '10s',
      describe: "with --job: how often a worker renews its chunks' leases (at most a third of --job-lease)",
    },
    'job-chunk-rows': {
      requiresArg: true,
      describe:
        "with --job: rows per chunk when this worker is the one that splits the input (default: a minute of one address at the job's rate, 500 at the documented workflow limit; 50 to 100000)",
    },
  },
} as const satisfies OptionFamily;

/** --job NAME and its options (with --sink; not with the options that pick rows or a folder to resume). */
export function resolveJob(a: JobArgs, ctx: Pick<OptionsContext, 'workerId'>): JobSettings | undefined {
  if (a.job === undefined) return undefined;
  const name = a.job.trim();
  if (name === '' || name.length > 200)
    throw new BreError('USAGE', `Expected --job to be a name of 1 to 200 characters, got '${a.job}'`, { field: 'job' });
  if (a.sink === undefined)
    throw new BreError(
      'USAGE',
      "Expected --sink URL with --job: the job's chunks and leases live in the sink's database, beside its tables",
      { field: 'job' },
    );
  const refused: [string, unknown][] = [
    ['--shard', a.shard],
    ['--sample', a.sample],
    ['--sample-share', a['sample-share']],
    ['--limit', a.limit],
  ];
  for (const [flag, v] of refused)
    if (v !== undefined)
      throw new BreError(
        'USAGE',
        `Expected no ${flag} with --job, got ${flag} ${String(v)}: a job's workers share the whole input between them`,
        { field: 'job' },
      );
  if (a.input === '-')
    throw new BreError(
      'USAGE',
      'Expected --input to be a file or a database with --job, got - (stdin): every worker reads the chunks it claims',
      { field: 'input' },
    );
  const leaseMs = parseDuration(a['job-lease'], { flag: 'job-lease', unit: 's', min: 1000 });
  const heartbeatMs = parseDuration(a['job-heartbeat'], { flag: 'job-heartbeat', unit: 's', min: 100 });
  if (heartbeatMs * 3 > leaseMs)
    throw new BreError(
      'USAGE',
      `Expected --job-heartbeat to be at most a third of --job-lease (${a['job-lease']}), got '${a['job-heartbeat']}': a lease must survive a missed heartbeat or two`,
      { field: 'job-heartbeat' },
    );
  const chunkRows =
    a['job-chunk-rows'] === undefined
      ? undefined
      : wholeNumber('job-chunk-rows', a['job-chunk-rows'], { min: 1, max: 1_000_000 });
  return {
    name,
    worker: ctx.workerId(),
    leaseMs,
    heartbeatMs,
    ...(chunkRows !== undefined ? { chunkRows } : {}),
    retryErrors: a['retry-errors'],
  };
}
