/**
 * A database URL option (`--input`, `--sink`) as the user gives it: the URL itself (no password allowed: it
 * would show in `ps` and shell history), `env:VARIABLE` (the URL, password and all, from the environment), or
 * `file:PATH` (from a file only its owner can read, as BRE_AUTH_TOKEN_FILE).
 */
import { BreError } from '@bre-batch/core/errors';
import { isDbUrl, parseDbUrl, type DbUrl } from '../db/index.js';
import { readOwnerOnlyFile } from './credentials.js';

export function resolveDbUrl(
  given: string,
  flag: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  read: (path: string, what: string) => string = readOwnerOnlyFile,
): DbUrl {
  if (given.startsWith('env:')) {
    const name = given.slice(4);
    const value = env[name];
    if (!value)
      throw new BreError(
        'USAGE',
        `Expected the environment variable ${name} (from ${flag} ${given}) to hold a database URL, got nothing`,
        { field: flag },
      );
    return parseDbUrl(value.trim(), { flag: `${flag} ${given}`, passwordAllowed: true });
  }
  if (given.startsWith('file:')) {
    const path = given.slice(5);
    return parseDbUrl(read(path, `${flag} file:`), { flag: `${flag} ${given}`, passwordAllowed: true });
  }
  return parseDbUrl(given, { flag });
}

/** Whether an option's value names a database (a URL, or where to find one) rather than a file. */
export function namesDatabase(given: string): boolean {
  return given.startsWith('env:') || given.startsWith('file:') || isDbUrl(given);
}
