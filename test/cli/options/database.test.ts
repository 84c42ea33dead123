/**
 * `run`'s database options (src/cli/run-options/database.ts): a database --input with --table or --query,
 * --input-retry, --input-timeout, --input-page-rows; --sink, --sink-table, --sink-schema, --sink-retry.
 * test/cli/db-input-option.test.ts has the refusals of a database --input's text options.
 */
import { describe, expect, it } from 'vitest';
import { fakeContext, refusal, resolveArgs } from './parse.js';

const DB = ['--input', 'postgres://app@db.example/risk', '--table', 'loans'];

describe('a database --input', () => {
  it('reads the URL from the environment with env:VAR, from the context only', () => {
    const ctx = fakeContext({ env: { RISK_DB: 'postgres://app:secret@db.example/risk' } });
    const s = resolveArgs(['--input', 'env:RISK_DB', '--table', 'loans'], ctx).settings;
    expect(s.source?.url).toMatchObject({ dialect: 'postgres', host: 'db.example', database: 'risk' });
    expect(s.input).not.toContain('secret');
    expect(refusal(['--input', 'env:RISK_DB', '--table', 'loans']).message).toMatch(
      /Expected the environment variable RISK_DB .* got nothing/,
    );
  });

  it('reads the URL from a file with file:PATH, through the context', () => {
    const ctx = fakeContext({
      readSecretFile: (path) => (path === '/secrets/db' ? 'mysql://app:pw@10.0.0.7/risk' : ''),
    });
    expect(resolveArgs(['--input', 'file:/secrets/db', '--table', 'loans'], ctx).settings.source?.url).toMatchObject({
      dialect: 'mysql',
      host: '10.0.0.7',
    });
  });

  it('reads as NDJSON (typed values) with no files root', () => {
    const s = resolveArgs(DB).settings;
    expect(s.inputFormat).toBe('ndjson');
    expect(s.input).toBe(s.source?.url.display);
  });
});

describe('--input-retry and --input-timeout', () => {
  it('default to 60 s and 5 min', () => {
    expect(resolveArgs(DB).settings.source).toMatchObject({ retryForMs: 60_000, statementTimeoutMs: 300_000 });
  });

  it('take durations', () => {
    expect(resolveArgs([...DB, '--input-retry', '2m', '--input-timeout', '90s']).settings.source).toMatchObject({
      retryForMs: 120_000,
      statementTimeoutMs: 90_000,
    });
  });

  it('refuse what is no duration, quoted as given', () => {
    expect(refusal([...DB, '--input-retry', 'soon']).message).toMatch(
      /Expected --input-retry to be a duration .*got 'soon'/,
    );
    expect(refusal([...DB, '--input-timeout', '0s']).message).toMatch(
      /Expected --input-timeout to be a duration of more than 0/,
    );
  });
});

describe('--input-page-rows', () => {
  it("defaults to the source's page and takes 1 to 100000", () => {
    expect(resolveArgs(DB).settings.source?.pageRows).toBe(2000);
    expect(resolveArgs([...DB, '--input-page-rows', '100000']).settings.source?.pageRows).toBe(100_000);
  });

  it.each(['0', '100001', '2.5', 'abc'])('refuses %s, quoted as given', (given) => {
    expect(refusal([...DB, '--input-page-rows', given])).toEqual({
      code: 'USAGE',
      message: `Expected --input-page-rows to be a whole number from 1 to 100000, got '${given}'`,
    });
  });
});

describe('--sink', () => {
  it('is off by default; its other options are refused without it', () => {
    expect(resolveArgs([]).settings.sink).toBeUndefined();
    expect(refusal(['--sink-table', 't']).message).toBe(
      'Expected --sink-table only with --sink URL, got --sink-table without --sink',
    );
    expect(refusal(['--sink-schema', 's']).message).toBe(
      'Expected --sink-schema only with --sink URL, got --sink-schema without --sink',
    );
  });

  it('names its table after the pipeline unless --sink-table says otherwise; retries 60 s by default', () => {
    expect(resolveArgs(['--sink', 'postgres://app@db/risk']).settings.sink).toMatchObject({
      table: 'location',
      retryForMs: 60_000,
    });
    expect(
      resolveArgs(['--sink', 'postgres://app@db/risk', '--sink-table', 'nightly', '--sink-retry', '5m']).settings.sink,
    ).toMatchObject({ table: 'nightly', retryForMs: 300_000 });
  });

  it('takes a schema only for PostgreSQL', () => {
    expect(resolveArgs(['--sink', 'postgres://app@db/risk', '--sink-schema', 'bre']).settings.sink).toMatchObject({
      schema: 'bre',
    });
    expect(refusal(['--sink', 'mysql://app@db/risk', '--sink-schema', 'bre']).message).toMatch(
      /Expected --sink-schema only with a --sink that has schemas \(PostgreSQL\)/,
    );
  });

  it('refuses a password on the command line', () => {
    expect(refusal(['--sink', 'postgres://app:pw@db/risk']).message).toMatch(/refusing a password on the command line/);
  });
});
