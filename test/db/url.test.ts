import { describe, expect, it } from 'vitest';
import { isDbUrl, parseDbUrl } from '../../src/db/index.js';

describe('parseDbUrl', () => {
  it.each([
    [
      'postgres://db.example.com/loans',
      { dialect: 'postgres', host: 'db.example.com', port: 5432, database: 'loans', tls: 'verify' },
    ],
    [
      'postgresql://u@127.0.0.1:6543/x',
      { dialect: 'postgres', host: '127.0.0.1', port: 6543, database: 'x', user: 'u', tls: 'off' },
    ],
    [
      'mysql://root@localhost/risk',
      { dialect: 'mysql', host: 'localhost', port: 3306, database: 'risk', user: 'root', tls: 'off' },
    ],
    ['mariadb://10.0.0.5/risk?sslmode=require', { dialect: 'mysql', host: '10.0.0.5', tls: 'no-verify' }],
    ['postgres://db.internal/x?sslmode=disable', { tls: 'off' }],
    ['postgres://127.0.0.1/x?sslmode=verify-full', { tls: 'verify' }],
    ['postgres://[::1]:5432/x', { host: '::1', tls: 'off' }],
    ['postgres://db/x?sslrootcert=/etc/ca.pem', { tls: 'verify', caFile: '/etc/ca.pem' }],
    ['postgres://us%40er@db/my%20db', { user: 'us@er', database: 'my db' }],
  ])('%s', (text, expected) => {
    expect(parseDbUrl(text, { flag: '--input' })).toMatchObject(expected);
  });

  it.each([
    ['postgres://u:secret@db/x', /refusing a password on the command line \(--sink\).*PGPASSWORD/],
    ['mysql://u:secret@db/x', /MYSQL_PWD/],
    ['postgres:///x', /name a host/],
    ['postgres://db/', /one database/],
    ['postgres://db/a/b', /one database/],
    [
      'postgres://db/x?sslmode=prefer',
      /Expected --sink's sslmode to be disable, require, no-verify, verify-ca or verify-full, got 'prefer'/,
    ],
    [
      'postgres://db/x?application_name=y',
      /Expected --sink's parameters to be among sslmode, ssl, sslrootcert, got 'application_name'/,
    ],
  ])('refuses %s', (text, message) => {
    let caught: unknown;
    try {
      parseDbUrl(text, { flag: '--sink' });
    } catch (err) {
      caught = err;
    }
    expect((caught as { code?: string }).code).toBe('USAGE');
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('secret');
  });

  it('accepts a password only from a place that is not the command line, and never shows it', () => {
    const url = parseDbUrl('postgres://u:s3cr%2Ft@db.example.com/x', { flag: '--sink', passwordAllowed: true });
    expect(url.password).toBe('s3cr/t');
    expect(url.display).toBe('postgres://u@db.example.com/x');
  });

  it.each([
    ['postgres://h/d', true],
    ['POSTGRESQL://h/d', true],
    ['mysql://h/d', true],
    ['mariadb://h/d', true],
    ['samples/x.csv', false],
    ['-', false],
    ['https://h/d', false],
    ['C:/data/x.csv', false],
  ])('isDbUrl(%s) = %s', (text, expected) => {
    expect(isDbUrl(text)).toBe(expected);
  });
});
