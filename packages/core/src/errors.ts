/**
 * One base error for everything bre-batch reports. Every error has a stable `code`; retries, exit codes
 * and errors.ndjson lines are decided from `code` and the context fields, never from message text
 * (the pattern of undici's lib/core/errors.js).
 */
/**
 * How an error code is treated, written once: the retry chain (src/http/chain.ts), the row runner
 * (src/pipeline/row.ts), the circuit breaker (src/pipeline/circuit.ts) and the CLI's exit code all read it.
 */
export interface ErrorTreatment {
  /**
   * Whether another attempt of the same call may succeed: `yes`; `no`; `2xx` only when the answer was a 2xx
   * (a body cut short in transit says nothing about the row; the documented answer is still to be had).
   */
  readonly retry: 'yes' | 'no' | '2xx';
  /** Stops the whole run: nothing later can succeed with the same credentials or address. */
  readonly fatal: boolean;
  /** Counts as the service failing (after all retries) for the circuit breaker; the row's own faults do not. */
  readonly serviceFailure: boolean;
  /** Exit code when it ends a command (docs/troubleshooting.md): 2 usage or configuration, 3 stopped early. */
  readonly exit: 2 | 3;
  /**
   * Where it lands, as the reader of errors.ndjson and of the reference (docs/reference/errors.md) sees it:
   * `row`, one line in errors.ndjson and the run goes on (a call's after every attempt); `stop`, the command
   * ends with `exit`; `row or stop`, either, as its entry says; `wait`, neither: the row waits and is sent again.
   */
  readonly lands: 'row' | 'stop' | 'row or stop' | 'wait';
}

const input = { retry: 'no', fatal: false, serviceFailure: false, exit: 2, lands: 'stop' } as const;
const rowFault = { retry: 'no', fatal: false, serviceFailure: false, exit: 2, lands: 'row' } as const;
const transient = { retry: 'yes', fatal: false, serviceFailure: true, exit: 2, lands: 'row' } as const;
const refused = { retry: 'no', fatal: true, serviceFailure: false, exit: 3, lands: 'stop' } as const;
const stop = { retry: 'no', fatal: false, serviceFailure: false, exit: 3, lands: 'stop' } as const;

const ERROR_TABLE = {
  // input and configuration (nothing is called)
  USAGE: input,
  CONFIG_INVALID: input,
  PIPELINE_INVALID: input,
  INPUT_UNREADABLE: input,
  /**
   * The input's header lacks a column the pipeline needs in every row, or two names collide
   * (packages/formats/src/input/header.ts).
   */
  INPUT_HEADER: input,
  /** An input with no data rows (0 bytes, a header only, blank lines, an empty table or query) without --allow-empty. */
  INPUT_EMPTY: input,
  INVALID_ROW: rowFault,
  /** A row of a sampled run (`run --sample`) with no key: it cannot be ranked, so it is in no stratum (src/sample/draw.ts). */
  SAMPLE_NO_KEY: rowFault,
  MALFORMED_ROW: rowFault,
  REPORT_UNREADABLE: rowFault,
  REPORT_FORMAT_UNKNOWN: rowFault,
  REPORT_FORMAT_UNSUPPORTED: rowFault,
  /**
   * A row's file column (bureau_report_path, bank_data_path) names a file outside the files root: an absolute
   * path elsewhere, `..`, or a symbolic link leading out (src/input/files-root.ts). A row fault; never read.
   */
  FILE_OUTSIDE_ROOT: rowFault,
  /**
   * A file column where the input has no folder (stdin) and no --files-root was given: the row's error
   * (NDJSON), or exit 2 before anything is called when the header names the column (CSV, Parquet).
   */
  FILES_ROOT_NEEDED: { ...input, lands: 'row or stop' },
  OUTPUT_MISMATCH: input,
  /** `compare`: the two runs are not the same sample (or only one is a sample): packages/backtest/src/sampled/. */
  SAMPLE_MISMATCH: input,
  /** `compare`: a sampled run's design (manifest.json `sample`) is unreadable, or its rows disagree with it. */
  SAMPLE_INVALID: input,
  /** A --local-address that is not on this machine or cannot reach a service (src/http/egress-check.ts). */
  LOCAL_ADDRESS_UNUSABLE: input,
  /** A database (--input or --sink URL) that cannot be connected to before the run (src/db/). */
  DB_UNREACHABLE: input,
  /** A statement the database refused before the run: a table that does not exist, a query with an error. */
  DB_QUERY_FAILED: input,
  /** A database input's row whose key is NULL (src/input/db/): that row's error. */
  MISSING_KEY: rowFault,
  /** A database input's rows that share one key: each is an error (which one is meant cannot be known). */
  DUPLICATE_KEY: rowFault,
  /**
   * A resumed database input whose rows no longer match the journal (a row number now holds another key):
   * the table changed behind the run; re-running cannot resume it, a new --out starts it again.
   */
  SOURCE_CHANGED: input,
  /**
   * A --sink table bre-batch did not create that cannot take the rows (no key column, no unique index on it, a
   * column it requires or cannot fill): exit 2 before any call; bre-batch never alters a user's table.
   */
  SINK_TABLE_MISMATCH: input,
  /**
   * `run --job NAME` with another pipeline, input, key, rate or sink table than the job was started with
   * (src/job/definition.ts): exit 2 before anything is called, the message saying which differs.
   */
  JOB_MISMATCH: input,
  /** A write the sink database refused mid-run (a value a user's column cannot take): the run stops; the folder keeps every row. */
  SINK_REJECTED: input,
  // a call and its answer
  AUTH_REFUSED: refused,
  IP_NOT_ALLOWED: refused,
  /**
   * A TLS failure reaching a service: its certificate not signed by a known CA, expired, for another host name,
   * or this side's client certificate refused. Configuration, not a row's fault: the run stops (src/http/tls-failure.ts).
   */
  TLS_FAILED: refused,
  /** A service answered a redirect (3xx): never followed, so the token never reaches another origin; the base URL is wrong. */
  REDIRECTED: refused,
  /**
   * A service's first calls all answered the same status the spec does not document (a gateway's 400 "No required
   * SSL certificate was sent", a 404 for a wrong path prefix): the configuration, not the rows (src/http/layers/first-calls.ts).
   */
  SERVICE_MISCONFIGURED: refused,
  /** Before the run: a service's host does not resolve, refuses the connection or fails TLS (src/http/preflight.ts). */
  SERVICE_UNREACHABLE: input,
  /**
   * A 429: the service's state, never a row's fault. Retried until the service answers, however many attempts
   * that takes (--max-attempts does not count them); not a failure for the circuit breaker, which counts
   * throttling apart. A service that refuses everything for --throttle-deadline stops the run (THROTTLED).
   */
  RATE_LIMITED: { retry: 'yes', fatal: false, serviceFailure: false, exit: 2, lands: 'wait' },
  TIMEOUT: transient,
  NETWORK: transient,
  SERVER_UNAVAILABLE: transient,
  SERVER_ERROR: { retry: 'no', fatal: false, serviceFailure: true, exit: 2, lands: 'row' },
  WORKFLOW_REJECTED_INPUT: rowFault,
  BUREAU_DECODE_FAILED: rowFault,
  VALIDATION_FAILED: rowFault,
  ACCOUNT_ERROR: rowFault,
  BAD_RESPONSE: { retry: '2xx', fatal: false, serviceFailure: true, exit: 2, lands: 'row' },
  /**
   * An answer longer than --max-response-size: cut there while it streamed (memory stays bounded whatever the
   * server sends). Not retried (the same request would get the same answer); counts against the service.
   */
  RESPONSE_TOO_LARGE: { retry: 'no', fatal: false, serviceFailure: true, exit: 2, lands: 'row' },
  NOT_READY: rowFault,
  HTTP_ERROR: rowFault,
  /** A bug: an exception nobody expected (in a normaliser, say). The row's line says so; the stack goes to the log. */
  UNEXPECTED: rowFault,
  /**
   * A bug that ends the command (`internalError`: anything thrown that is not a BreError, a thread of the run
   * that crashed): the message asks for a report and says BRE_DEBUG=1 prints the stack.
   */
  INTERNAL: { retry: 'no', fatal: false, serviceFailure: false, exit: 2, lands: 'stop' },
  // the run as a whole
  CIRCUIT_OPEN: stop,
  INTERRUPTED: stop,
  /**
   * A service answered nothing but 429s for --throttle-deadline: the run stops (no row goes to errors for it),
   * resumable once the service takes calls again.
   */
  THROTTLED: { retry: 'no', fatal: true, serviceFailure: false, exit: 3, lands: 'stop' },
  /**
   * --max-spend reached: no more rows start, those in flight finish; no row goes to errors for it. Resumable with
   * a higher --max-spend (src/pipeline/spend.ts).
   */
  SPEND_CAP: { retry: 'no', fatal: true, serviceFailure: false, exit: 3, lands: 'stop' },
  /** ENOSPC or EDQUOT writing the output folder (or the metrics file): nothing is lost, a re-run resumes. */
  DISK_FULL: stop,
  /** The output folder refused a write for another reason than a full disk (EFBIG, EIO, EACCES...): resumable once fixed. */
  OUTPUT_UNWRITABLE: stop,
  /** The database input went away mid-run and did not come back within --input-retry: resumable. */
  SOURCE_UNAVAILABLE: stop,
  /** The --sink database went away mid-run and did not come back within --sink-retry: resumable, nothing lost. */
  SINK_UNAVAILABLE: stop,
  /**
   * A workflow answered with another version than `--expect-version` expects (src/pipeline/versions.ts): the run
   * stops, that answer and any other of an unexpected version not written; resumable once the expectation changes.
   */
  VERSION_UNEXPECTED: stop,
} as const satisfies Record<string, ErrorTreatment>;

export type ErrorCode = keyof typeof ERROR_TABLE;
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export function treatmentOf(code: ErrorCode): ErrorTreatment {
  return ERROR_TABLE[code];
}

/** Worth another attempt of the same call (through the limiter again). */
export function isRetryable(e: { readonly code: ErrorCode; readonly status: number | null }): boolean {
  const retry = ERROR_TABLE[e.code].retry;
  return retry === 'yes' || (retry === '2xx' && e.status !== null && e.status >= 200 && e.status < 300);
}

/** Stops the whole run. */
export function isFatal(code: ErrorCode): boolean {
  return ERROR_TABLE[code].fatal;
}

/** Counts against the service in the circuit breaker. */
export function isServiceFailure(code: ErrorCode): boolean {
  return ERROR_TABLE[code].serviceFailure;
}

/** The exit code of a command that ended with `err` thrown; anything that is not a BreError is a bug: 2. */
export function exitCodeOf(err: unknown): 2 | 3 {
  return err instanceof BreError ? ERROR_TABLE[err.code].exit : 2;
}

/** @public */
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

/** The context fields, readable on the error as they were given (declared once, in BreErrorContext). */
export interface BreError extends Readonly<Omit<BreErrorContext, 'status' | 'cause'>> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above declares the fields the constructor assigns from the context, once.
export class BreError extends Error {
  readonly code: ErrorCode;
  /** HTTP status of the answer; null when there was none. */
  readonly status: number | null;

  readonly #context: BreErrorContext;

  constructor(code: ErrorCode, message: string, ctx: BreErrorContext = {}) {
    super(message, ctx.cause === undefined ? undefined : { cause: ctx.cause });
    this.name = 'BreError';
    this.code = code;
    this.#context = ctx;
    const { status, cause: _cause, ...fields } = ctx;
    this.status = status ?? null;
    Object.assign(this, fields);
  }

  /** A copy with more context (a stage or the attempt count known only higher up). */
  with(ctx: BreErrorContext): BreError {
    const merged = new BreError(this.code, this.message, { ...this.#context, ...ctx });
    merged.stack = this.stack;
    return merged;
  }

  /**
   * The error as plain data, the one way it crosses to another thread (a worker's message): code, message, the
   * context but its cause (which may not be cloneable, and whose details stay on the thread that met it), and
   * the stack, for BRE_DEBUG.
   */
  toJSON(): BreErrorJSON {
    const { cause: _cause, ...context } = this.#context;
    return {
      code: this.code,
      message: this.message,
      context,
      ...(this.stack === undefined ? {} : { stack: this.stack }),
    };
  }

  /**
   * The error `toJSON` made, on the thread that receives it; `cause`, what the sender carried of its cause
   * (errorFromJSON: a system error's code and path).
   */
  static fromJSON(json: BreErrorJSON, cause?: unknown): BreError {
    const e = new BreError(json.code, json.message, cause === undefined ? json.context : { ...json.context, cause });
    if (json.stack !== undefined) e.stack = json.stack;
    return e;
  }
}

/**
 * A BreError as a message between threads carries it (BreError.toJSON).
 * @public
 */
export interface BreErrorJSON {
  readonly code: ErrorCode;
  readonly message: string;
  readonly context: Omit<BreErrorContext, 'cause'>;
  readonly stack?: string;
}

/** A system error (or any other) as plain data: what diskFullCode and a full disk's path (app/execute-run.ts) read. */
interface SystemErrorJSON {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly syscall?: unknown;
  readonly path?: unknown;
}

/**
 * Any error as it crosses between threads, the one way it does (src/output/worker-thread.ts): a BreError as its
 * toJSON with the first system error under it, any other error as its name, message, stack and system fields.
 */
export type ErrorJSON = { readonly bre: BreErrorJSON; readonly cause?: SystemErrorJSON } | SystemErrorJSON;

function systemJSON(err: unknown): SystemErrorJSON {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & Record<string, unknown>;
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    code: e.code,
    errno: e.errno,
    syscall: e.syscall,
    path: e.path,
  };
}

function fromSystemJSON(j: SystemErrorJSON): Error {
  const e = Object.assign(new Error(j.message), j.code === undefined ? {} : { code: j.code });
  e.name = j.name;
  if (j.stack !== undefined) e.stack = j.stack;
  for (const k of ['errno', 'syscall', 'path'] as const) if (j[k] !== undefined) Object.assign(e, { [k]: j[k] });
  return e;
}

/** The first error with a system code under `err` (its causes), if any. */
function systemCause(err: unknown): unknown {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth += 1) {
    if (typeof (e as { code?: unknown }).code === 'string' && !(e instanceof BreError)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `err` as plain data, on the thread that met it. */
export function errorToJSON(err: unknown): ErrorJSON {
  if (!(err instanceof BreError)) return systemJSON(err);
  const cause = systemCause(err);
  return { bre: err.toJSON(), ...(cause === undefined ? {} : { cause: systemJSON(cause) }) };
}

/** The error errorToJSON carried, on the thread that receives it. */
export function errorFromJSON(j: ErrorJSON): Error {
  if (!('bre' in j)) return fromSystemJSON(j);
  return BreError.fromJSON(j.bre, j.cause === undefined ? undefined : fromSystemJSON(j.cause));
}

export function isBreError(err: unknown): err is BreError {
  return err instanceof BreError;
}

/**
 * A bug met outside any row (`where`: `in the sink's thread`): INTERNAL, with a message that asks for a
 * report. The stack is the cause's, printed with BRE_DEBUG=1.
 */
export function internalError(err: unknown, where?: string): BreError {
  if (err instanceof BreError && err.code === 'INTERNAL') return err;
  const message = err instanceof Error ? err.message : String(err);
  const e = new BreError(
    'INTERNAL',
    `bre-batch met a bug${where ? ` ${where}` : ''}: ${message}. Please report it with the command you ran and what it printed; run it again with BRE_DEBUG=1 to print the stack as well.`,
    { cause: err },
  );
  if (err instanceof Error && err.stack !== undefined) e.stack = err.stack;
  return e;
}

/**
 * The output folder refused a write for another reason than a full disk (a file-size limit, an I/O error, a
 * permission taken away): the run stops, nothing is lost, and once the folder is fixed a re-run resumes.
 */
export function outputUnwritable(folder: string, cause: unknown, what = 'the output folder'): BreError {
  const code = (cause as { code?: unknown } | null)?.code;
  const reason = (cause as Error | null)?.message ?? String(cause);
  return new BreError(
    'OUTPUT_UNWRITABLE',
    `cannot write to ${what} ${folder}: ${reason}${typeof code === 'string' && !reason.includes(code) ? ` (${code})` : ''}. Nothing is lost: fix the folder (room for large files, permissions, the disk), then re-run the same command and it resumes where it stopped.`,
    { cause },
  );
}

/** Anything thrown, as a BreError (an unexpected throw becomes a row error, UNEXPECTED, never a crash). */
export function toBreError(err: unknown, fallback: ErrorCode = 'UNEXPECTED'): BreError {
  if (err instanceof BreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new BreError(fallback, message, { cause: err });
}

/** The system's codes for a full disk: no space left (ENOSPC), or the user's quota used up (EDQUOT). */
const DISK_FULL_CODES: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
};

/** ENOSPC or EDQUOT when `err`, or an error it was caused by, is a full disk; undefined otherwise. */
export function diskFullCode(err: unknown): 'ENOSPC' | 'EDQUOT' | undefined {
  for (
    let e = err, depth = 0;
    e !== null && typeof e === 'object' && depth < 8;
    e = (e as { cause?: unknown }).cause, depth += 1
  ) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') return code;
  }
  return undefined;
}

/**
 * The stop of a run whose disk filled up: one message that names the folder, says the disk is full, and says
 * what to do. Nothing is lost: every row written is whole in the journal (a line cut by the full disk is cut
 * back, packages/formats/src/ndjson-file.ts), every other row runs again on resume.
 */
export function diskFullError(folder: string, cause: unknown, what = 'the output folder'): BreError {
  const code = diskFullCode(cause) ?? 'ENOSPC';
  return new BreError(
    'DISK_FULL',
    `the disk is full: cannot write to ${what} ${folder} (${code}: ${DISK_FULL_CODES[code]}). Nothing is lost: once there is room, re-run the same command and it resumes where it stopped.`,
    { cause },
  );
}
