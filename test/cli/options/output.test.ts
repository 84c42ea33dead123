/**
 * `run`'s output options (src/cli/run-options/output.ts): --out, --output-formats, --keep-personal-data, --retry-errors,
 * --keep-journal.
 */
import { describe, expect, it } from 'vitest';
import { refusal, resolveArgs } from './parse.js';

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
