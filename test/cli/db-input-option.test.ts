/** `run --input` naming a database (src/cli/run-options/database.ts resolveDbInput): what it takes, and what it refuses with exit 2. */
import { describe, expect, it } from 'vitest';
import { resolveDbInput as resolveWith } from '../../src/cli/run-options/database.js';
import { DEFAULT_PAGE_ROWS } from '../../src/input/db/index.js';

const resolveDbInput = (a: Parameters<typeof resolveWith>[0]) =>
  resolveWith(a, {
    env: {},
    readSecretFile: () => {
      throw new Error('no file is read');
    },
  });
const base = {
  'input-retry': '60s',
  'input-timeout': '5m',
  'input-page-rows': DEFAULT_PAGE_ROWS,
  'decimal-comma': false,
} as const;

describe('a database --input', () => {
  it('takes --table or --query, the retry and the page size', () => {
    const s = resolveDbInput({
      ...base,
      input: 'postgresql://app@db.example/risk',
      table: 'Risk.Loans',
      'input-retry': '2m',
      'input-timeout': '90s',
      'input-page-rows': 500,
    });
    expect(s).toMatchObject({
      relation: { kind: 'table', schema: 'risk', name: 'loans' },
      retryForMs: 120_000,
      statementTimeoutMs: 90_000,
      pageRows: 500,
    });
    expect(s!.url).toMatchObject({ dialect: 'postgres', host: 'db.example', database: 'risk', tls: 'verify' });
    expect(
      resolveDbInput({ ...base, input: 'mariadb://app@127.0.0.1/risk', query: 'SELECT 1 AS reference_id' })!.relation,
    ).toEqual({ kind: 'query', sql: 'SELECT 1 AS reference_id' });
  });

  it('is not one for a file, and a file takes no --table or --query', () => {
    expect(resolveDbInput({ ...base, input: 'samples/location.csv' })).toBeUndefined();
    expect(() => resolveDbInput({ ...base, input: 'in.csv', query: 'SELECT 1' })).toThrow(
      /Expected --query only with a database --input .*got --input in.csv/,
    );
  });

  it.each([
    [{ 'input-format': 'csv' }, /Expected no --input-format with a database --input, got --input-format csv/],
    [{ encoding: 'latin1' }, /Expected no --encoding with a database --input, got --encoding latin1/],
    [{ delimiter: ';' }, /Expected no --delimiter with a database --input, got --delimiter ;/],
    [{ 'decimal-comma': true }, /Expected no --decimal-comma with a database --input, got --decimal-comma:/],
    [{ 'input-page-rows': 0 }, /Expected --input-page-rows to be a whole number from 1 to 100000, got '0'/],
    [{ 'input-retry': 'soon' }, /Expected --input-retry to be a duration/],
    [{ 'input-timeout': '0s' }, /Expected --input-timeout to be a duration of more than 0/],
    [{ table: 'a.b.c' }, /Expected --table to be NAME or SCHEMA.NAME/],
    [{ input: 'postgres://app:pw@db/risk' }, /refusing a password on the command line/],
  ])('refuses %j', (extra, message) => {
    expect(() => resolveDbInput({ ...base, input: 'postgres://app@db/risk', table: 't', ...extra })).toThrow(
      expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(message) }),
    );
  });
});
