import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { namesDatabase, resolveDbUrl } from '../../src/cli/db-url.js';
import { tempDir } from '../helpers/temp.js';

describe('a database URL option', () => {
  it('takes a password from env:VARIABLE and never shows it', () => {
    const url = resolveDbUrl('env:RISK_DB', '--sink', { RISK_DB: 'postgres://app:pw@db.example.com/risk' });
    expect(url.password).toBe('pw');
    expect(url.display).toBe('postgres://app@db.example.com/risk');
  });

  it('takes a password from an owner-only file:PATH, and refuses a file others can read', () => {
    const dir = tempDir();
    const file = join(dir, 'url');
    writeFileSync(file, 'mysql://app:pw@db.example.com/risk\n');
    chmodSync(file, 0o600);
    expect(resolveDbUrl(`file:${file}`, '--input').password).toBe('pw');
    chmodSync(file, 0o644);
    expect(() => resolveDbUrl(`file:${file}`, '--input')).toThrow(
      /readable by its owner only \(chmod 600\), got mode 644/,
    );
  });

  it('refuses an unset variable and a password on the command line', () => {
    expect(() => resolveDbUrl('env:NOPE', '--sink', {})).toThrow(
      /Expected the environment variable NOPE \(from --sink env:NOPE\) to hold a database URL, got nothing/,
    );
    expect(() => resolveDbUrl('postgres://a:pw@h/d', '--sink', {})).toThrow(/refusing a password on the command line/);
  });

  it.each([
    ['postgres://h/d', true],
    ['env:X', true],
    ['file:/x', true],
    ['in.csv', false],
    ['-', false],
  ])('namesDatabase(%s) = %s', (text, expected) => {
    expect(namesDatabase(text)).toBe(expected);
  });
});
