/**
 * Driver errors as messages a person acts on, and what every dialect shares in classifying them: the network's
 * own codes (Node's ECONNREFUSED, ECONNRESET...) and a session's ConnectionLost mean the same whatever the
 * database. The server's codes (PostgreSQL's SQLSTATE, MySQL's ER_* names) are each dialect's to read
 * (`classify` and `connectReason` in ./postgres.ts, ./mysql.ts). The wording is chosen from the code, never
 * from the driver's message text. No message here ever holds a password: only the URL's display form.
 */
import { BreError } from '@bre-batch/core/errors';
import type { DbUrl } from './url.js';

interface DriverError {
  readonly code?: string;
  readonly message?: string;
}

/**
 * What a failed statement means to the one who would try it again: `lost`, the connection is gone (connect
 * again and repeat); `conflict`, the transaction lost a race (a deadlock, a serialization failure: run it
 * again); `exists`, what the statement makes is already there (another worker made it first); `refused`, the
 * server will refuse it again.
 */
export type Failure = 'lost' | 'conflict' | 'exists' | 'refused';

/** The code of a driver error (undefined when it has none). */
function codeOf(err: unknown): string | undefined {
  const code = ((err ?? {}) as DriverError).code;
  return typeof code === 'string' ? code : undefined;
}

/** The code a session puts on a driver error that came from the connection, not from the server. */
const CONNECTION_LOST = 'CONNECTION_LOST';

/**
 * A statement failed because the connection broke. Both drivers report that without a code (every error the
 * server sends carries one, so a codeless one is the client's own: terminated, not queryable).
 */
export class ConnectionLost extends Error {
  readonly code = CONNECTION_LOST;
  constructor(cause: unknown) {
    super(`the connection was lost: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ConnectionLost';
  }
}

/** A driver error as a session throws it: a codeless one is the connection's (ConnectionLost). */
export function sessionError(err: unknown): unknown {
  return codeOf(err) === undefined ? new ConnectionLost(err) : err;
}

/** The network's codes and a session's lost connection, whatever the database. */
const NETWORK_LOSS = new Set([
  CONNECTION_LOST,
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Whether the error is the network's (the same for every dialect): the dialects' `classify` asks this first. */
function isNetworkLoss(err: unknown): boolean {
  return NETWORK_LOSS.has(codeOf(err) ?? '');
}

/** Why a connection could not be made, in words: the network's and TLS's codes; a dialect adds its server's. */
function connectReason(err: unknown, serverReason?: (code: string) => string | undefined): string {
  const e = (err ?? {}) as DriverError;
  const own = e.code === undefined ? undefined : serverReason?.(e.code);
  if (own !== undefined) return own;
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'nothing answers at that address and port (is the server running?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
    case 'ECONNRESET':
      return 'the connection timed out or was reset (a firewall, or the wrong port?)';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'CERT_HAS_EXPIRED':
      return "the server's TLS certificate could not be verified (give its CA with sslrootcert=PATH, or sslmode=no-verify if you accept the risk)";
    default:
      return `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`;
  }
}

/** The two refusals of a connection every server has, as a dialect's `serverReason` answers them. */
const REFUSED_LOGIN = 'the server refused the user or password';
const NO_DATABASE = 'the database does not exist';

/** A database's error codes by what they mean, as its dialect declares them. */
export interface ServerCodes {
  /** The connection is gone (beside the network's own losses, isNetworkLoss). */
  readonly lost: (code: string) => boolean;
  /** A serialization failure or a deadlock: the transaction may be tried again. */
  readonly conflict: readonly string[];
  /** A column or table that is there already. */
  readonly exists: readonly string[];
  readonly refusedLogin: readonly string[];
  readonly noDatabase: readonly string[];
}

/** A dialect's `classify`, and the reason its server gave for refusing a connection (connectFailure). */
export function serverCodes(c: ServerCodes): {
  classify: (err: unknown) => Failure;
  serverReason: (code: string) => string | undefined;
} {
  return {
    classify: (err) => {
      if (isNetworkLoss(err)) return 'lost';
      const code = codeOf(err) ?? '';
      if (c.lost(code)) return 'lost';
      if (c.conflict.includes(code)) return 'conflict';
      if (c.exists.includes(code)) return 'exists';
      return 'refused';
    },
    serverReason: (code) =>
      c.refusedLogin.includes(code) ? REFUSED_LOGIN : c.noDatabase.includes(code) ? NO_DATABASE : undefined,
  };
}

export function connectFailure(
  url: DbUrl,
  label: string,
  err: unknown,
  serverReason?: (code: string) => string | undefined,
): BreError {
  return new BreError(
    'DB_UNREACHABLE',
    `cannot connect to ${label} at ${url.display}: ${connectReason(err, serverReason)}`,
    { cause: err },
  );
}

/** The driver's own words about a failed statement (SQLSTATE or ER_* code first), for a message. */
export function queryReason(err: unknown): string {
  const e = (err ?? {}) as DriverError;
  return `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`;
}
