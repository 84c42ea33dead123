/**
 * What each dialect declares of itself: its URLs, its capabilities and what its server's errors mean. Pure:
 * driver errors are stood in for by objects carrying the code the driver puts on them (the live sessions'
 * losses are test/db/session.test.ts's).
 */
import { describe, expect, it } from 'vitest';
import type { BreError } from '@bre-batch/core/errors';
import { ConnectionLost, dialectOf, parseDbUrl, type Dialect } from '../../src/db/index.js';
import { mysqlDialect } from '../../src/db/mysql.js';
import { postgres } from '../../src/db/postgres.js';
import { parseRelation } from '../../src/input/db/relation.js';
import { resolveSink } from '../../src/cli/sink-options.js';

const err = (code: string) => Object.assign(new Error(`driver says ${code}`), { code });

describe.each([
  ['postgres', postgres],
  ['mysql', mysqlDialect],
] as const)('%s', (name, dialect: Dialect) => {
  it('the network, a lost session: lost, whatever the database', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'])
      expect(dialect.classify(err(code)), code).toBe('lost');
    expect(dialect.classify(new ConnectionLost(new Error('terminated')))).toBe('lost');
  });

  it('a code it does not know, or none at all: refused (trying again would not mend it)', () => {
    expect(dialect.classify(err('XX999'))).toBe('refused');
    expect(dialect.classify(new Error('no code'))).toBe('refused');
    expect(dialect.classify(undefined)).toBe('refused');
  });

  it('its URLs parse to it, with its default port', () => {
    for (const scheme of dialect.schemes) {
      const url = parseDbUrl(`${scheme}://u@127.0.0.1/db`, { flag: '--input' });
      expect(url.dialect).toBe(name);
      expect(url.port).toBe(dialect.defaultPort);
      expect(dialectOf(url)).toBe(dialect);
    }
  });

  it('a password on the command line is refused, naming where its driver reads one', () => {
    expect(() => parseDbUrl(`${dialect.schemes[0]}://u:secret@127.0.0.1/db`, { flag: '--sink' })).toThrow(
      dialect.passwordFrom,
    );
  });

  it('--table folds an unquoted name as the database does; a quoted one is kept', () => {
    const rel = parseRelation({ table: 'Risk.Loans' }, name);
    expect(rel).toEqual(
      dialect.foldsUnquoted
        ? { kind: 'table', schema: 'risk', name: 'loans' }
        : { kind: 'table', schema: 'Risk', name: 'Loans' },
    );
    expect(parseRelation({ table: '"Risk"."Loans"' }, name)).toEqual({ kind: 'table', schema: 'Risk', name: 'Loans' });
  });

  it('--sink-schema only where the database has schemas', () => {
    const args = { sink: `${dialect.schemes[0]}://u@127.0.0.1/db`, 'sink-schema': 'risk', 'sink-retry': '60s' };
    if (dialect.schemas) {
      expect(resolveSink(args, 'location')?.schema).toBe('risk');
    } else {
      const e = (() => {
        try {
          resolveSink(args, 'location');
        } catch (x) {
          return x;
        }
        return undefined;
      })();
      expect((e as BreError).code).toBe('USAGE');
      expect((e as BreError).message).toContain(`${dialect.label} has no schema apart from the URL's database`);
    }
  });
});

describe('PostgreSQL reads SQLSTATE', () => {
  it('class 08 and the shutdowns are lost; serialization and deadlock conflicts; duplicates exist', () => {
    for (const code of ['08000', '08003', '08006', '57P01', '57P02', '57P03', '25P03'])
      expect(postgres.classify(err(code)), code).toBe('lost');
    expect(postgres.classify(err('57P04'))).toBe('refused');
    for (const code of ['40001', '40P01']) expect(postgres.classify(err(code)), code).toBe('conflict');
    for (const code of ['42701', '42P07', '42710']) expect(postgres.classify(err(code)), code).toBe('exists');
    for (const code of ['23505', '42P01', '22P02', 'ER_LOCK_DEADLOCK', 'PROTOCOL_CONNECTION_LOST'])
      expect(postgres.classify(err(code)), code).toBe('refused');
  });
});

describe('MySQL reads its ER_* names', () => {
  it('the connection and the server going away are lost; lock conflicts; duplicates exist', () => {
    for (const code of [
      'PROTOCOL_CONNECTION_LOST',
      'ER_SERVER_SHUTDOWN',
      'ER_CONNECTION_KILLED',
      'ER_QUERY_INTERRUPTED',
    ])
      expect(mysqlDialect.classify(err(code)), code).toBe('lost');
    for (const code of ['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'])
      expect(mysqlDialect.classify(err(code)), code).toBe('conflict');
    for (const code of ['ER_DUP_FIELDNAME', 'ER_TABLE_EXISTS_ERROR'])
      expect(mysqlDialect.classify(err(code)), code).toBe('exists');
    for (const code of ['ER_DUP_ENTRY', 'ER_NO_SUCH_TABLE', '08006', '40001', '42701'])
      expect(mysqlDialect.classify(err(code)), code).toBe('refused');
  });
});

describe('the registry', () => {
  it('a scheme no dialect has is refused, listing every scheme', () => {
    expect(() => parseDbUrl('oracle://h/db', { flag: '--input' })).toThrow(
      "Expected --input to start with postgres://, postgresql://, mysql:// or mariadb://, got 'oracle://'",
    );
  });
});
