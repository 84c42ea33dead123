/**
 * `run`'s output options (src/cli/run-options/output.ts): --out, --output-formats, --keep-personal-data, --retry-errors,
 * --keep-journal; and BRE_ROW_GROUP_ROWS, read from the environment.
 */
import { describe, expect, it } from 'vitest';
import { fakeContext, refusal, resolveArgs } from './parse.js';

describe('--out', () => {
  it('is left to the run by default (output/<pipeline>-<UTC timestamp>, or the unfinished folder of the same run: src/pipeline/default-folder.ts)', () => {
    expect(resolveArgs([]).out).toBeUndefined();
  });

  it('is the folder given', () => {
    expect(resolveArgs(['--out', '/data/nightly']).out).toBe('/data/nightly');
  });
});

describe('--output-formats', () => {
  it('defaults to csv and parquet', () => {
    expect([...resolveArgs([]).settings.outputFormats]).toEqual(['csv', 'parquet']);
  });

  it('takes one or both, any case', () => {
    expect([...resolveArgs(['--output-formats', 'CSV']).settings.outputFormats]).toEqual(['csv']);
    expect([...resolveArgs(['--output-formats', 'parquet,csv']).settings.outputFormats]).toEqual(['parquet', 'csv']);
  });

  it('refuses another, quoted as given', () => {
    expect(refusal(['--output-formats', 'xlsx'])).toEqual({
      code: 'USAGE',
      message: "Expected --output-formats to list csv and/or parquet (comma-separated), got 'xlsx'",
    });
  });
});

describe('--keep-personal-data', () => {
  it('is off by default', () => {
    expect(resolveArgs([]).settings.keepPersonalData).toBe(false);
    expect(resolveArgs(['--keep-personal-data']).settings.keepPersonalData).toBe(true);
  });
});

describe('--retry-errors', () => {
  it('needs --out: the folder whose errors to retry', () => {
    expect(refusal(['--retry-errors'])).toEqual({
      code: 'USAGE',
      message: '--retry-errors needs --out DIR: the folder of the run whose errors to retry',
    });
    expect(resolveArgs(['--retry-errors', '--out', 'o']).settings.retryErrors).toBe(true);
    expect(resolveArgs([]).settings.retryErrors).toBe(false);
  });
});

describe('--keep-journal', () => {
  it("is off by default: a finished run's journal is compacted", () => {
    expect(resolveArgs([]).keepJournal).toBe(false);
    expect(resolveArgs(['--keep-journal']).keepJournal).toBe(true);
  });
});

describe('BRE_ROW_GROUP_ROWS', () => {
  const env = (value: string) => fakeContext({ env: { BRE_ROW_GROUP_ROWS: value } });

  it("unset or empty: no setting (the spool's 10,000 rows a row group)", () => {
    expect(resolveArgs([]).settings.rowGroupRows).toBeUndefined();
    expect(resolveArgs([], env('')).settings.rowGroupRows).toBeUndefined();
  });

  it('a whole number from 1,000 to 10,000: the rows of a row group of results.parquet', () => {
    expect(resolveArgs([], env('1000')).settings.rowGroupRows).toBe(1000);
    expect(resolveArgs([], env('10000')).settings.rowGroupRows).toBe(10_000);
  });

  it('refuses anything else, naming the variable', () => {
    for (const value of ['999', '10001', '2.5', 'lots', '-1000', '1e3'])
      expect(refusal([], env(value))).toEqual({
        code: 'USAGE',
        message: `Expected BRE_ROW_GROUP_ROWS to be a whole number from 1000 to 10000 (rows per row group of results.parquet), got '${value}'`,
      });
  });
});
