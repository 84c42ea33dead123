/**
 * How big a job's chunks are when --job-chunk-rows is not given (src/pipeline/job.ts chunkRowsFor): a minute
 * of one address at the job's rate, so the last chunk ends about a minute after the others, within bounds.
 */
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { DEFAULT_RATES } from '@bre-batch/core/rates';
import { chunkRowsFor } from '../../src/pipeline/job.js';
import type { JobSettings } from '../../src/pipeline/settings.js';

const job: JobSettings = { name: 'j', worker: 'w', leaseMs: 60_000, heartbeatMs: 10_000, retryErrors: false };
const rescore = loadPipeline('rescore');
const location = loadPipeline('location');

describe('chunkRowsFor', () => {
  it.each([
    ['the documented limits: 500 workflow calls a minute set the pace', rescore, DEFAULT_RATES, 500],
    [
      '--rate workflow=4/s: about 240 rows a minute (the pacer spaces calls a little wider than the rate)',
      location,
      { ...DEFAULT_RATES, workflow: { limit: 4, windowMs: 1000 } },
      239,
    ],
    ['a very low rate: the lower bound', location, { ...DEFAULT_RATES, workflow: { limit: 10, windowMs: 60_000 } }, 50],
    [
      'a very high rate: the upper bound',
      location,
      { ...DEFAULT_RATES, workflow: { limit: 10_000, windowMs: 1000 } },
      100_000,
    ],
    ['no limit on the services called: the upper bound', location, { ...DEFAULT_RATES, workflow: null }, 100_000],
  ] as const)('%s', (_, pipeline, rates, rows) => {
    expect(chunkRowsFor({ job, pipeline, rates })).toBe(rows);
  });

  it('--job-chunk-rows wins', () => {
    expect(chunkRowsFor({ job: { ...job, chunkRows: 25 }, pipeline: rescore, rates: DEFAULT_RATES })).toBe(25);
  });
});
