/**
 * The pure parts of a job's statements on the databases (src/db/job-sql.ts, src/db/mysql-job.ts): `$n`
 * placeholders bound as `?` in order (each parameter repeated where it is), and which MySQL and MariaDB servers
 * claim with FOR UPDATE SKIP LOCKED.
 */
import { describe, expect, it } from 'vitest';
import { placeholders, positional } from '../../src/db/job-sql.js';
import { skipLockedSince } from '../../src/db/mysql-job.js';

describe("a job's statements", () => {
  it.each([
    ['SELECT 1 FROM t WHERE a = $1', [7], 'SELECT 1 FROM t WHERE a = ?', [7]],
    [
      'UPDATE t SET x = CASE WHEN $3 THEN $2 END, y = CASE WHEN $3 THEN 1 END WHERE a = $1',
      ['a', 'b', true],
      'UPDATE t SET x = CASE WHEN ? THEN ? END, y = CASE WHEN ? THEN 1 END WHERE a = ?',
      [true, 'b', true, 'a'],
    ],
    ['SELECT $10, $1', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'SELECT ?, ?', [10, 1]],
    ['SELECT 1', [], 'SELECT 1', []],
  ])('%s binds positionally', (sql, params, text, bound) => {
    expect(positional(sql, params)).toEqual({ sql: text, params: bound });
  });

  it('an IN list of n placeholders from a given number', () => {
    expect(placeholders(2, 3)).toBe('$2, $3, $4');
    expect(placeholders(1, 1)).toBe('$1');
  });

  it.each([
    ['10.11.19-MariaDB-0+deb12u1', 'MariaDB 10.6'],
    ['10.6.0-MariaDB', 'MariaDB 10.6'],
    ['11.4.2-MariaDB-ubu2404', 'MariaDB 10.6'],
    ['10.5.23-MariaDB-0+deb11u1', undefined],
    ['8.0.36', 'MySQL 8.0.1'],
    ['8.4.0-commercial', 'MySQL 8.0.1'],
    ['8.0.0-dmr', undefined],
    ['5.7.44-log', undefined],
  ])('%s: SKIP LOCKED since %s', (version, since) => {
    expect(skipLockedSince(version)).toBe(since);
  });
});
