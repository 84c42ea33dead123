/** --table and --query as a relation (src/input/db/relation.ts), and what the manifest records of it. */
import { describe, expect, it } from 'vitest';
import { parseDbUrl } from '../../../src/db/index.js';
import {
  describeRelation,
  parseRelation,
  sourceIdentity,
  splitQualifiedName,
  tableName,
} from '../../../src/input/db/index.js';

describe('--table', () => {
  it.each([
    { given: 'loans', dialect: 'postgres', rel: { kind: 'table', name: 'loans' }, shown: 'loans' },
    { given: 'Loans', dialect: 'postgres', rel: { kind: 'table', name: 'loans' }, shown: 'loans' },
    { given: 'Loans', dialect: 'mysql', rel: { kind: 'table', name: 'Loans' }, shown: '"Loans"' },
    {
      given: 'risk.loans',
      dialect: 'postgres',
      rel: { kind: 'table', schema: 'risk', name: 'loans' },
      shown: 'risk.loans',
    },
    {
      given: '"My Schema"."Loans.2024"',
      dialect: 'postgres',
      rel: { kind: 'table', schema: 'My Schema', name: 'Loans.2024' },
      shown: '"My Schema"."Loans.2024"',
    },
    { given: '"a""b"', dialect: 'postgres', rel: { kind: 'table', name: 'a"b' }, shown: '"a""b"' },
    {
      given: '`risk`.`Loans`',
      dialect: 'mysql',
      rel: { kind: 'table', schema: 'risk', name: 'Loans' },
      shown: 'risk."Loans"',
    },
    { given: ' loans ', dialect: 'postgres', rel: { kind: 'table', name: 'loans' }, shown: 'loans' },
  ] as const)('$given ($dialect)', ({ given, dialect, rel, shown }) => {
    const parsed = parseRelation({ table: given }, dialect);
    expect(parsed).toEqual(rel);
    expect(tableName(parsed)).toBe(shown);
    // What is shown reads back as the same table.
    expect(parseRelation({ table: shown }, dialect)).toEqual(rel);
  });

  it.each(['', 'a.b.c', 'a..b', '"unclosed', '""', 'a b', '.a', 'a.'])('refuses %j with Expected/got', (given) => {
    expect(() => parseRelation({ table: given }, 'postgres')).toThrow(/Expected --table to be NAME or SCHEMA.NAME/);
    expect(splitQualifiedName(given) === undefined || splitQualifiedName(given)!.length > 2).toBe(true);
  });

  it('wants exactly one of --table and --query', () => {
    expect(() => parseRelation({}, 'postgres')).toThrow(/Expected --table NAME or --query/);
    expect(() => parseRelation({ table: 'a', query: 'SELECT 1' }, 'postgres')).toThrow(/got both/);
    expect(() => parseRelation({ query: ' ; ' }, 'postgres')).toThrow(/got an empty one/);
  });
});

describe('--query', () => {
  it('is kept as written, described on one line and cut short', () => {
    const rel = parseRelation({ query: ' SELECT *\n  FROM loans WHERE x > 1; ' }, 'postgres');
    expect(rel).toEqual({ kind: 'query', sql: 'SELECT *\n  FROM loans WHERE x > 1;' });
    expect(describeRelation(rel)).toBe('the query SELECT * FROM loans WHERE x > 1;');
    expect(describeRelation({ kind: 'query', sql: `SELECT ${'x, '.repeat(100)}y` }).length).toBeLessThan(200);
  });
});

describe('sourceIdentity (the manifest)', () => {
  it('is the same for the spellings of one database, without password or parameters', () => {
    const rel = parseRelation({ table: 'loans' }, 'postgres');
    const a = sourceIdentity(parseDbUrl('postgresql://app@db.example:5432/risk?sslmode=require', { flag: 'x' }), rel);
    const b = sourceIdentity(
      parseDbUrl('postgres://app:secret@db.example/risk', { flag: 'x', passwordAllowed: true }),
      rel,
    );
    expect(a).toEqual({ url: 'postgres://app@db.example:5432/risk', table: 'loans', query: null });
    expect(b).toEqual(a);
    const m = sourceIdentity(parseDbUrl('mariadb://root@[::1]/x', { flag: 'x' }), { kind: 'query', sql: 'SELECT 1' });
    expect(m).toEqual({ url: 'mysql://root@[::1]:3306/x', table: null, query: 'SELECT 1' });
  });
});
