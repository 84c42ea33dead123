/**
 * A database URL as the user gives it (`--input`, `--sink`): which dialect, where, which database, and how to
 * connect. Pure: reading a URL from the environment or from an owner-only file is the command line's job
 * (src/cli/db-url.ts); here a password is accepted only when the caller says the text came from such a place,
 * because a password on the command line shows in `ps` and in shell history (the token's rule, docs/real-services.md).
 */
import { BreError } from '@bre-batch/core/errors';

/** A dialect's name (`postgres`, `mysql`), as registered in ./index.ts. */
export type DialectName = string;

/**
 * What reading a URL needs to know of a dialect; each dialect file declares it (./dialect.ts extends it), so
 * that this file names none.
 */
export interface DialectAddress {
  readonly name: DialectName;
  /** The URL schemes it answers to, without `://` (`postgres`, `postgresql`). */
  readonly schemes: readonly string[];
  readonly defaultPort: number;
  /** Where its driver reads a password the URL does not carry, for the message refusing one on the command line. */
  readonly passwordFrom: string;
}

/**
 * How the connection is encrypted. `verify`: TLS, the server's certificate checked against the system's (or
 * `sslrootcert`'s) authorities and its name against the host; `no-verify`: TLS without those checks;
 * `off`: plain TCP.
 * @public
 */
export type TlsMode = 'verify' | 'no-verify' | 'off';

export interface DbUrl {
  readonly dialect: DialectName;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  /** Undefined: the driver's default (PGUSER or the login name for PostgreSQL, root-less MySQL refuses). */
  readonly user?: string;
  /** Only when the URL came from the environment or an owner-only file. */
  readonly password?: string;
  readonly tls: TlsMode;
  /** A CA bundle file for `verify` (sslrootcert=PATH). */
  readonly caFile?: string;
  /** The URL without its password, for messages, logs and the manifest. */
  readonly display: string;
}

export interface ParseOptions {
  /** The flag the URL was given with, for messages (`--input`, `--sink`). */
  readonly flag: string;
  /** The text came from an environment variable or an owner-only file: a password may be in it. */
  readonly passwordAllowed?: boolean;
}

function dialectOfScheme(scheme: string, dialects: readonly DialectAddress[]): DialectAddress | undefined {
  const s = scheme.toLowerCase().replace(/:$/, '');
  return dialects.find((d) => d.schemes.includes(s));
}

/** Whether `text` is a database URL (and not a file path): it starts with one of the dialects' schemes. */
export function isDbUrlOf(text: string, dialects: readonly DialectAddress[]): boolean {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  return m !== null && dialectOfScheme(m[1], dialects) !== undefined;
}

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|\[::1\])$/i;

/** Loopback needs no TLS (nothing crosses a network); every other host gets it unless the URL says otherwise. */
function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host);
}

/**
 * `sslmode` as libpq spells it, for both dialects: `disable` turns TLS off, `require` (or `no-verify`) encrypts
 * without checking the certificate, `verify-ca`/`verify-full` check it. Only an explicit value weakens the
 * default; `prefer` and `allow` would fall back to plain text silently, so they are refused.
 */
function tlsOf(host: string, params: URLSearchParams, flag: string): TlsMode {
  const given = params.get('sslmode') ?? params.get('ssl');
  if (given === null) return isLoopbackHost(host) ? 'off' : 'verify';
  switch (given.toLowerCase()) {
    case 'disable':
    case 'false':
      return 'off';
    case 'require':
    case 'no-verify':
      return 'no-verify';
    case 'verify-ca':
    case 'verify-full':
    case 'true':
      return 'verify';
    default:
      throw new BreError(
        'USAGE',
        `Expected ${flag}'s sslmode to be disable, require, no-verify, verify-ca or verify-full, got '${given}'`,
        { field: flag },
      );
  }
}

const KNOWN_PARAMS = new Set(['sslmode', 'ssl', 'sslrootcert']);

export function parseDbUrlOf(text: string, opts: ParseOptions, dialects: readonly DialectAddress[]): DbUrl {
  const { flag } = opts;
  if (!URL.canParse(text))
    throw new BreError(
      'USAGE',
      `Expected ${flag} to be a database URL such as postgres://host:5432/db or mysql://host/db, got '${redactUrlText(text)}'`,
      { field: flag },
    );
  const url = new URL(text);
  const found = dialectOfScheme(url.protocol, dialects);
  if (!found) {
    const schemes = dialects.flatMap((d) => d.schemes.map((x) => `${x}://`));
    throw new BreError(
      'USAGE',
      `Expected ${flag} to start with ${schemes.slice(0, -1).join(', ')} or ${schemes[schemes.length - 1]}, got '${url.protocol}//'`,
      { field: flag },
    );
  }
  const dialect = found.name;
  const password = url.password === '' ? undefined : decodeURIComponent(url.password);
  if (password !== undefined && !opts.passwordAllowed) {
    throw new BreError(
      'USAGE',
      `refusing a password on the command line (${flag}): it would show in ps and in shell history. ` +
        `Give it in ${found.passwordFrom}, or pass the whole URL as ${flag} env:VARIABLE or ${flag} file:PATH (a file only its owner can read)`,
      { field: flag },
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '')
    throw new BreError(
      'USAGE',
      `Expected ${flag} to name a host (postgres://HOST[:PORT]/DB), got '${redactUrlText(text)}'`,
      { field: flag },
    );
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '' || database.includes('/')) {
    throw new BreError(
      'USAGE',
      `Expected ${flag} to name one database after the host (postgres://HOST[:PORT]/DB), got '${redactUrlText(text)}'`,
      { field: flag },
    );
  }
  for (const name of url.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(name))
      throw new BreError(
        'USAGE',
        `Expected ${flag}'s parameters to be among ${[...KNOWN_PARAMS].join(', ')}, got '${name}'`,
        { field: flag },
      );
  }
  const port = url.port === '' ? found.defaultPort : Number(url.port);
  const user = url.username === '' ? undefined : decodeURIComponent(url.username);
  const tls = tlsOf(host, url.searchParams, flag);
  const caFile = url.searchParams.get('sslrootcert') ?? undefined;
  const shown = new URL(url.href);
  shown.password = '';
  return { dialect, host, port, database, user, password, tls, caFile, display: shown.href };
}

/** A URL-ish text with any password replaced, for a message about text that did not parse. */
function redactUrlText(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
