/**
 * The keys an output folder holds per row (src/output/journal/keys.ts), which a database input read again is
 * checked against, and the manifest's record of a database input (src/output/folder-identity.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '@bre-batch/formats';
import { JournalKeys, rowAndKey } from '../../../src/output/journal/keys.js';
import { checkSameRun, sourceDifferences } from '../../../src/output/folder-identity.js';
import { tempDir } from '../../helpers/temp.js';

describe('rowAndKey', () => {
  it.each([
    { line: '{"row":3,"key":"LOC-1","stages":{}}', want: { row: 3, key: 'LOC-1' } },
    { line: '{"row":12,"key":null,"stages":{}}', want: { row: 12, key: null } },
    { line: '{"row":4,"line":4,"key":"a\\"b","stage":null}', want: { row: 4, key: 'a"b' } },
    { line: '{"row":5,"line":null,"key":"x\\\\","code":"MISSING_KEY"}', want: { row: 5, key: 'x\\' } },
    { line: '{"key":"k","row":6}', want: { row: 6, key: 'k' } },
    { line: '{"row":7}', want: undefined },
    { line: '{"row":8,"key":"torn', want: undefined },
    { line: 'not json', want: undefined },
  ])('$line', ({ line, want }) => {
    expect(rowAndKey(line)).toEqual(want);
  });
});

describe('JournalKeys', () => {
  it('holds each row after the start with its key, from results, errors and the errors being retried', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'results.ndjson'),
      '{"row":1,"key":"a","stages":{}}\n{"row":5,"key":"e","stages":{}}\n{"row":3,"key":"c","stages":{}}\n',
    );
    writeFileSync(
      join(dir, 'errors.ndjson'),
      '{"row":4,"line":4,"key":null,"stage":null,"status":null,"code":"MISSING_KEY","message":"m","attempts":0,"input":null}\n',
    );
    writeFileSync(
      join(dir, 'errors.retrying.ndjson'),
      '{"row":9000,"line":9000,"key":"z","stage":"s","status":500,"code":"SERVER_ERROR","message":"m","attempts":6,"input":null}\n',
    );
    const keys = await JournalKeys.read(dir, 2);
    expect(keys.size).toBe(4);
    expect(keys.matches(1, 'a')).toBeUndefined(); // at or before the start: not kept
    expect(keys.matches(3, 'c')).toBe(true);
    expect(keys.matches(3, 'C')).toBe(false);
    expect(keys.matches(4, null)).toBe(true);
    expect(keys.matches(4, 'null')).toBe(false);
    expect(keys.matches(5, null)).toBe(false);
    expect(keys.matches(6, 'f')).toBeUndefined();
    expect(keys.matches(9000, 'z')).toBe(true);
    const all = await JournalKeys.read(dir, 0);
    expect(all.matches(1, 'a')).toBe(true);
  });

  it('an empty folder holds nothing', async () => {
    const keys = await JournalKeys.read(tempDir(), 0);
    expect(keys.size).toBe(0);
    expect(keys.matches(1, 'a')).toBeUndefined();
  });
});

function manifest(input: Partial<Manifest['input']>): Manifest {
  return {
    version: 1,
    tool: 'bre-batch',
    pipeline: { name: 'location', path: '/p/location.yaml', sha256: 'abc' },
    input: { path: 'postgres://app@db/risk', format: 'postgres', size: null, sha256: null, ...input },
    key: 'reference_id',
    shard: null,
    limit: null,
    created_at: '2026-11-24T00:00:00Z',
  };
}

describe('the manifest of a database input', () => {
  const loans = { url: 'postgres://app@db:5432/risk', table: 'loans', query: null };
  it.each([
    { why: 'the same table', a: loans, b: loans, problems: [] },
    {
      why: 'another table',
      a: loans,
      b: { ...loans, table: 'loans_2024' },
      problems: ['it read table loans, now table loans_2024'],
    },
    {
      why: 'a query instead of the table',
      a: loans,
      b: { ...loans, table: null, query: 'SELECT * FROM loans' },
      problems: ['it read table loans, now the query SELECT * FROM loans'],
    },
    {
      why: 'another server',
      a: loans,
      b: { ...loans, url: 'postgres://app@replica:5432/risk' },
      problems: ['it read the database postgres://app@db:5432/risk, now postgres://app@replica:5432/risk'],
    },
    {
      why: 'a file before, a database now',
      a: undefined,
      b: loans,
      problems: ['it was made from the file postgres://app@db/risk, now from the database postgres://app@db/risk'],
    },
    { why: 'files both times', a: undefined, b: undefined, problems: [] },
  ])('$why', ({ a, b, problems }) => {
    expect(sourceDifferences(manifest({ source: a }), manifest({ source: b }))).toEqual(problems);
  });

  it('a resume with another source is OUTPUT_MISMATCH, saying what differs', () => {
    const run = () =>
      checkSameRun('/out', manifest({ source: loans }), manifest({ source: { ...loans, table: 'other' } }));
    expect(run).toThrow(
      expect.objectContaining({
        code: 'OUTPUT_MISMATCH',
        message: expect.stringMatching(/refusing to resume into \/out: it read table loans, now table other/),
      }),
    );
  });
});
