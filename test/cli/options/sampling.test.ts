/** `run`'s sampling options (src/cli/run-options/sampling.ts): --sample, --sample-share, --stratify-by, --seed, --sample-allocation, --limit, --shard. */
import { describe, expect, it } from 'vitest';
import { refusal, resolveArgs } from './parse.js';

describe('--sample and --sample-share', () => {
  it('send every row by default', () => {
    expect(resolveArgs([]).settings.sample).toBeUndefined();
  });

  it('draw a sample: of N rows, or a share of every stratum', () => {
    expect(resolveArgs(['--sample', '100']).settings.sample).toMatchObject({
      size: 100,
      share: null,
      allocation: 'proportional',
      seed: 'bre-batch',
      stratifyBy: [],
    });
    expect(resolveArgs(['--sample-share', '0.1']).settings.sample).toMatchObject({ size: null, share: 0.1 });
  });

  it('need a file: stdin is read only once', () => {
    expect(refusal(['--input=-', '--input-format', 'csv', '--sample', '10']).message).toMatch(
      /^Expected --input to be a file with --sample or --sample-share, got - \(stdin\)/,
    );
  });
});

describe('--stratify-by and --seed', () => {
  it('give the strata and the seed', () => {
    expect(
      resolveArgs(['--sample', '10', '--stratify-by', 'state,application_date:month', '--seed', 's1']).settings.sample,
    ).toMatchObject({
      seed: 's1',
      stratifyBy: [{ column: 'state' }, { column: 'application_date', group: 'month' }],
    });
  });

  it('are refused without a sample', () => {
    expect(refusal(['--seed', 's1']).code).toBe('USAGE');
  });
});

describe('--sample-allocation', () => {
  it('is proportional by default, or equal', () => {
    expect(resolveArgs(['--sample', '10', '--sample-allocation', 'equal']).settings.sample).toMatchObject({
      allocation: 'equal',
    });
  });

  it('names its values when refused', () => {
    expect(refusal(['--sample', '10', '--sample-allocation', 'neyman']).message).toBe(
      "Expected --sample-allocation to be proportional or equal, got 'neyman'",
    );
  });
});

describe('--limit', () => {
  it('reads every row by default', () => {
    expect(resolveArgs([]).settings.limit).toBeUndefined();
    expect(resolveArgs(['--limit', '0']).settings.limit).toBe(0);
    expect(resolveArgs(['--limit', '25']).settings.limit).toBe(25);
  });

  it.each(['abc', '-1', '2.5', '10rows'])('refuses %s, quoted as given (not NaN)', (given) => {
    expect(refusal([`--limit=${given}`])).toEqual({
      code: 'USAGE',
      message: `Expected --limit to be a whole number >= 0, got '${given}'`,
    });
  });
});

describe('--shard', () => {
  it('is K/N, K from 1', () => {
    expect(resolveArgs([]).settings.shard).toBeUndefined();
    expect(resolveArgs(['--shard', '2/4']).settings.shard).toEqual({ index: 2, count: 4 });
  });

  it.each(['0/4', '5/4', 'two'])('refuses %s', (given) => {
    expect(refusal(['--shard', given])).toEqual({
      code: 'USAGE',
      message: `Expected --shard K/N with 1 <= K <= N (e.g. 2/4), got '${given}'`,
    });
  });
});
