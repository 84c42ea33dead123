/**
 * Driver errors as messages a person acts on. Both drivers put a stable code on their errors (Node's
 * ECONNREFUSED/ENOTFOUND, PostgreSQL's SQLSTATE, MySQL's ER_* names); the wording is chosen from the code,
 * never from the driver's message text. No message here ever holds a password: only the URL's display form.
 */
import { BreError } from '../errors.js';
import type { DbUrl } from './url.js';

interface DriverError {
  readonly code?: string;
  readonly errno?: number;
  readonly message?: string;
}

/** The code a session puts on a driver error that came from the connection, not from the server. */
export const CONNECTION_LOST = 'CONNECTION_LOST';

/**
 * A statement failed because the connection broke. node-postgres reports that without a code (every error
 * the server sends carries a SQLSTATE, so a codeless one is the client's own: terminated, not queryable).
 */
export class ConnectionLost extends Error {
  readonly code = CONNECTION_LOST;
  constructor(cause: unknown) {
    super(`the connection was lost: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ConnectionLost';
  }
}

/** Why a connection could not be made, in words, from the error's code. */
export function connectReason(err: unknown): string {
  const e = (err ?? {}) as DriverError;
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'nothing answers at that address and port (is the server running?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
    case 'ECONNRESET':
      return 'the connection timed out or was reset (a firewall, or the wrong port?)';
    case '28P01':
    case '28000':
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return 'the server refused the user or password';
    case '3D000':
    case 'ER_BAD_DB_ERROR':
      return 'the database does not exist';
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

export function connectFailure(url: DbUrl, label: string, err: unknown): BreError {
  return new BreError('DB_UNREACHABLE', `cannot connect to ${label} at ${url.display}: ${connectReason(err)}`, { cause: err });
}

/** The driver's own words about a failed statement (SQLSTATE or ER_* code first), for a message. */
export function queryReason(err: unknown): string {
  const e = (err ?? {}) as DriverError;
  return `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}`;
}

/**
 * Whether an error means the connection is gone (the server went away, the backend was killed, the network
 * broke), as opposed to a statement the server refused: only then is reconnecting and trying again sensible.
 */
export function isConnectionLoss(err: unknown): boolean {
  const e = (err ?? {}) as DriverError;
  const code = e.code ?? '';
  if (LOSS_CODES.has(code)) return true;
  // SQLSTATE class 08 (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now).
  return /^08/.test(code) || /^57P0[123]$/.test(code);
}

const LOSS_CODES = new Set([
  CONNECTION_LOST, 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED', 'ER_QUERY_INTERRUPTED',
]);

/** Serialization failures and deadlocks: the transaction may simply be run again. */
export function isRetryableConflict(err: unknown): boolean {
  const code = ((err ?? {}) as DriverError).code ?? '';
  return code === '40001' || code === '40P01' || code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}
