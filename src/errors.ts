/**
 * One base error for everything bre-batch reports. Every error has a stable `code`; retries, exit codes
 * and errors.ndjson lines are decided from `code` and the context fields, never from message text
 * (the pattern of undici's lib/core/errors.js).
 */
export type ErrorCode =
  // input and configuration (nothing is called)
  | 'USAGE'
  | 'CONFIG_INVALID'
  | 'PIPELINE_INVALID'
  | 'INPUT_UNREADABLE'
  | 'INVALID_ROW'
  | 'MALFORMED_ROW'
  | 'REPORT_UNREADABLE'
  | 'REPORT_FORMAT_UNKNOWN'
  | 'REPORT_FORMAT_UNSUPPORTED'
  | 'OUTPUT_MISMATCH'
  // a call and its answer
  | 'AUTH_REFUSED'
  | 'IP_NOT_ALLOWED'
  | 'RATE_LIMITED'
  | 'TIMEOUT'
  | 'NETWORK'
  | 'SERVER_UNAVAILABLE'
  | 'SERVER_ERROR'
  | 'WORKFLOW_REJECTED_INPUT'
  | 'BUREAU_DECODE_FAILED'
  | 'VALIDATION_FAILED'
  | 'ACCOUNT_ERROR'
  | 'BAD_RESPONSE'
  | 'NOT_READY'
  | 'HTTP_ERROR'
  // the run as a whole
  | 'CIRCUIT_OPEN'
  | 'INTERRUPTED';

export interface BreErrorContext {
  /** HTTP status of the answer, when there was one. */
  readonly status?: number | null;
  /** Service that answered: workflow, bureau or account. */
  readonly service?: string;
  /** Pipeline stage id. */
  readonly stage?: string;
  /** Data row number (from 1) and physical input line (from 1). */
  readonly row?: number;
  readonly line?: number;
  /** Input field concerned, as the user named it. */
  readonly field?: string;
  /** What was expected there, in words. */
  readonly expected?: string;
  /** Attempts made for the call, retries included. */
  readonly attempts?: number;
  /** Seconds the server asked us to wait (Retry-After). */
  readonly retryAfterSeconds?: number;
  /** Further details (e.g. a list of field errors); must never hold secrets. */
  readonly details?: unknown;
  readonly cause?: unknown;
}

export class BreError extends Error {
  readonly code: ErrorCode;
  readonly status: number | null;
  readonly service?: string;
  readonly stage?: string;
  readonly row?: number;
  readonly line?: number;
  readonly field?: string;
  readonly expected?: string;
  readonly attempts?: number;
  readonly retryAfterSeconds?: number;
  readonly details?: unknown;

  readonly #context: BreErrorContext;

  constructor(code: ErrorCode, message: string, ctx: BreErrorContext = {}) {
    super(message, ctx.cause === undefined ? undefined : { cause: ctx.cause });
    this.name = 'BreError';
    this.code = code;
    this.#context = ctx;
    this.status = ctx.status ?? null;
    this.service = ctx.service;
    this.stage = ctx.stage;
    this.row = ctx.row;
    this.line = ctx.line;
    this.field = ctx.field;
    this.expected = ctx.expected;
    this.attempts = ctx.attempts;
    this.retryAfterSeconds = ctx.retryAfterSeconds;
    this.details = ctx.details;
  }

  /** A copy with more context (a stage or the attempt count known only higher up). */
  with(ctx: BreErrorContext): BreError {
    const merged = new BreError(this.code, this.message, { ...this.#context, ...ctx });
    merged.stack = this.stack;
    return merged;
  }
}

/** Codes worth another attempt of the same call (through the limiter again). */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'RATE_LIMITED', 'TIMEOUT', 'NETWORK', 'SERVER_UNAVAILABLE',
]);

/** Codes that stop the whole run: nothing later can succeed with the same credentials or address. */
export const FATAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['AUTH_REFUSED', 'IP_NOT_ALLOWED']);

export function isBreError(err: unknown): err is BreError {
  return err instanceof BreError;
}

/** Anything thrown, as a BreError (an unexpected throw becomes a row error, never a crash). */
export function toBreError(err: unknown, fallback: ErrorCode = 'HTTP_ERROR'): BreError {
  if (err instanceof BreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new BreError(fallback, message, { cause: err });
}
