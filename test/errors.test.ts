/**
 * The error table (packages/core/src/errors.ts), row by row, and the places that read it: the retry chain, the row runner's
 * fatal codes, the circuit breaker and the CLI's exit code.
 */
import { describe, expect, it } from 'vitest';
import {
  BreError,
  ERROR_CODES,
  diskFullCode,
  diskFullError,
  errorFromJSON,
  errorToJSON,
  exitCodeOf,
  internalError,
  isFatal,
  isRetryable,
  isServiceFailure,
  outputUnwritable,
  toBreError,
  treatmentOf,
  type ErrorCode,
} from '@bre-batch/core/errors';
import { sinkFailure } from '../src/output/sink/sink-thread.js';
import { writeFailureStop } from '../src/pipeline/stop.js';
import { Circuit } from '../src/pipeline/circuit.js';

/** code, retried, fatal, counts for the circuit, exit code when thrown to the top. */
const EXPECTED: readonly [ErrorCode, 'yes' | 'no' | '2xx', boolean, boolean, 2 | 3][] = [
  ['USAGE', 'no', false, false, 2],
  ['CONFIG_INVALID', 'no', false, false, 2],
  ['PIPELINE_INVALID', 'no', false, false, 2],
  ['INPUT_UNREADABLE', 'no', false, false, 2],
  ['INPUT_HEADER', 'no', false, false, 2],
  ['INPUT_EMPTY', 'no', false, false, 2],
  ['INVALID_ROW', 'no', false, false, 2],
  ['MALFORMED_ROW', 'no', false, false, 2],
  ['SAMPLE_NO_KEY', 'no', false, false, 2],
  ['REPORT_UNREADABLE', 'no', false, false, 2],
  ['REPORT_FORMAT_UNKNOWN', 'no', false, false, 2],
  ['REPORT_FORMAT_UNSUPPORTED', 'no', false, false, 2],
  ['FILE_OUTSIDE_ROOT', 'no', false, false, 2],
  ['FILES_ROOT_NEEDED', 'no', false, false, 2],
  ['OUTPUT_MISMATCH', 'no', false, false, 2],
  ['SAMPLE_MISMATCH', 'no', false, false, 2],
  ['SAMPLE_INVALID', 'no', false, false, 2],
  ['LOCAL_ADDRESS_UNUSABLE', 'no', false, false, 2],
  ['SERVICE_UNREACHABLE', 'no', false, false, 2],
  ['DB_UNREACHABLE', 'no', false, false, 2],
  ['DB_QUERY_FAILED', 'no', false, false, 2],
  ['MISSING_KEY', 'no', false, false, 2],
  ['DUPLICATE_KEY', 'no', false, false, 2],
  ['SOURCE_CHANGED', 'no', false, false, 2],
  ['SINK_TABLE_MISMATCH', 'no', false, false, 2],
  ['JOB_MISMATCH', 'no', false, false, 2],
  ['SINK_REJECTED', 'no', false, false, 2],
  ['AUTH_REFUSED', 'no', true, false, 3],
  ['IP_NOT_ALLOWED', 'no', true, false, 3],
  ['TLS_FAILED', 'no', true, false, 3],
  ['REDIRECTED', 'no', true, false, 3],
  ['SERVICE_MISCONFIGURED', 'no', true, false, 3],
  ['RATE_LIMITED', 'yes', false, false, 2],
  ['TIMEOUT', 'yes', false, true, 2],
  ['NETWORK', 'yes', false, true, 2],
  ['SERVER_UNAVAILABLE', 'yes', false, true, 2],
  ['SERVER_ERROR', 'no', false, true, 2],
  ['WORKFLOW_REJECTED_INPUT', 'no', false, false, 2],
  ['BUREAU_DECODE_FAILED', 'no', false, false, 2],
  ['VALIDATION_FAILED', 'no', false, false, 2],
  ['ACCOUNT_ERROR', 'no', false, false, 2],
  ['BAD_RESPONSE', '2xx', false, true, 2],
  ['RESPONSE_TOO_LARGE', 'no', false, true, 2],
  ['NOT_READY', 'no', false, false, 2],
  ['HTTP_ERROR', 'no', false, false, 2],
  ['UNEXPECTED', 'no', false, false, 2],
  ['INTERNAL', 'no', false, false, 2],
  ['CIRCUIT_OPEN', 'no', false, false, 3],
  ['INTERRUPTED', 'no', false, false, 3],
  ['THROTTLED', 'no', true, false, 3],
  ['DISK_FULL', 'no', false, false, 3],
  ['OUTPUT_UNWRITABLE', 'no', false, false, 3],
  ['SOURCE_UNAVAILABLE', 'no', false, false, 3],
  ['SINK_UNAVAILABLE', 'no', false, false, 3],
  ['SPEND_CAP', 'no', true, false, 3],
  ['VERSION_UNEXPECTED', 'no', false, false, 3],
];

/** Codes that are one row's line in errors.ndjson (the run goes on); RATE_LIMITED waits; the rest stop the command. */
const ROW_CODES: readonly ErrorCode[] = [
  'INVALID_ROW',
  'MALFORMED_ROW',
  'SAMPLE_NO_KEY',
  'REPORT_UNREADABLE',
  'REPORT_FORMAT_UNKNOWN',
  'REPORT_FORMAT_UNSUPPORTED',
  'FILE_OUTSIDE_ROOT',
  'MISSING_KEY',
  'DUPLICATE_KEY',
  'TIMEOUT',
  'NETWORK',
  'SERVER_UNAVAILABLE',
  'SERVER_ERROR',
  'WORKFLOW_REJECTED_INPUT',
  'BUREAU_DECODE_FAILED',
  'VALIDATION_FAILED',
  'ACCOUNT_ERROR',
  'BAD_RESPONSE',
  'RESPONSE_TOO_LARGE',
  'NOT_READY',
  'HTTP_ERROR',
  'UNEXPECTED',
];
const landsOf = (code: ErrorCode): string =>
  ROW_CODES.includes(code)
    ? 'row'
    : code === 'RATE_LIMITED'
      ? 'wait'
      : code === 'FILES_ROOT_NEEDED'
        ? 'row or stop'
        : 'stop';

describe('the error table', () => {
  it('has a row for every code, and this test one for every row', () => {
    expect([...ERROR_CODES].sort()).toEqual(EXPECTED.map(([code]) => code).sort());
  });

  it.each(EXPECTED)('%s: retry %s, fatal %s, circuit %s, exit %i', (code, retry, fatal, circuit, exit) => {
    expect(treatmentOf(code)).toEqual({ retry, fatal, serviceFailure: circuit, exit, lands: landsOf(code) });
    // A code that stops the run is never a row's line, and a row's line never stops it.
    if (fatal) expect(treatmentOf(code).lands).toBe('stop');
    expect(isRetryable({ code, status: 200 })).toBe(retry !== 'no');
    expect(isRetryable({ code, status: 500 })).toBe(retry === 'yes');
    expect(isRetryable({ code, status: null })).toBe(retry === 'yes');
    expect(isFatal(code)).toBe(fatal);
    expect(isServiceFailure(code)).toBe(circuit);
    expect(exitCodeOf(new BreError(code, 'x'))).toBe(exit);
    // The circuit breaker: one failure in a row of 1 opens it only for a service failure.
    expect(new Circuit({ consecutive: 1, share: 1, window: 10 }).record(code) !== undefined).toBe(circuit);
  });

  it('anything thrown that is not a BreError is UNEXPECTED, and exits 2 at the top', () => {
    const e = toBreError(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(e.code).toBe('UNEXPECTED');
    expect(e.cause).toBeInstanceOf(TypeError);
    expect(exitCodeOf(new TypeError('boom'))).toBe(2);
  });
});

describe('a full disk (issue 24)', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: failed, write`), { code, syscall: 'write' });
  it.each([
    ['ENOSPC', errno('ENOSPC'), 'ENOSPC'],
    ['EDQUOT', errno('EDQUOT'), 'EDQUOT'],
    ['ENOSPC as the cause of another error', new Error('spool failed', { cause: errno('ENOSPC') }), 'ENOSPC'],
    ['EIO', errno('EIO'), undefined],
    ['EACCES', errno('EACCES'), undefined],
    ['a string', 'ENOSPC', undefined],
    ['null', null, undefined],
  ] as const)('%s -> %s', (_name, err, code) => {
    expect(diskFullCode(err)).toBe(code);
  });

  it('DISK_FULL: exit 3, one message naming the folder, saying the disk is full and that a re-run resumes', () => {
    const e = diskFullError('/data/out/night', errno('EDQUOT'));
    expect(e.code).toBe('DISK_FULL');
    expect(exitCodeOf(e)).toBe(3);
    expect(e.message).toBe(
      'the disk is full: cannot write to the output folder /data/out/night (EDQUOT: disk quota exceeded). Nothing is lost: once there is room, re-run the same command and it resumes where it stopped.',
    );
  });
});

describe('passing a BreError between threads', () => {
  it('toJSON is plain data (cloneable), without the cause; fromJSON gives the same code, message, context and stack', () => {
    const cause = new Error('socket hang up');
    const e = new BreError('SINK_UNAVAILABLE', 'the sink went away', {
      status: 503,
      service: 'workflow',
      field: 'sink-table',
      details: { tries: 3 },
      cause,
    });
    const json = e.toJSON();
    expect(json).not.toHaveProperty('context.cause');
    const back = BreError.fromJSON(structuredClone(json));
    expect(back).toBeInstanceOf(BreError);
    expect(back.code).toBe('SINK_UNAVAILABLE');
    expect(back.message).toBe('the sink went away');
    expect(back.status).toBe(503);
    expect(back.service).toBe('workflow');
    expect(back.field).toBe('sink-table');
    expect(back.details).toEqual({ tries: 3 });
    expect(back.stack).toBe(e.stack);
    expect(exitCodeOf(back)).toBe(3);
  });

  it('carries a BreError with its code, and the full disk under it', () => {
    const enospc = Object.assign(new Error('no space'), { code: 'ENOSPC', path: '/out/results.csv.tmp' });
    const back = errorFromJSON(structuredClone(errorToJSON(diskFullError('/out', enospc))));
    expect(back).toBeInstanceOf(BreError);
    expect((back as BreError).code).toBe('DISK_FULL');
    expect(diskFullCode(back)).toBe('ENOSPC');
    expect(((back as BreError).cause as NodeJS.ErrnoException).path).toBe('/out/results.csv.tmp');
    const plain = errorFromJSON(structuredClone(errorToJSON(new BreError('OUTPUT_UNWRITABLE', 'x'))));
    expect([(plain as BreError).code, diskFullCode(plain)]).toEqual(['OUTPUT_UNWRITABLE', undefined]);
  });

  it("the sink's thread sends its own BreErrors as they are, anything else as INTERNAL", () => {
    const own = errorFromJSON(
      structuredClone(errorToJSON(sinkFailure(new BreError('SINK_REJECTED', 'a column refused')))),
    ) as BreError;
    expect([own.code, own.message]).toEqual(['SINK_REJECTED', 'a column refused']);
    const crash = errorFromJSON(
      structuredClone(errorToJSON(sinkFailure(new TypeError("Cannot read properties of undefined (reading 'rows')")))),
    ) as BreError;
    expect(crash.code).toBe('INTERNAL');
    expect(crash.message).toContain("in the sink's thread: Cannot read properties of undefined (reading 'rows')");
    expect(crash.message).toContain('BRE_DEBUG=1');
  });
});

describe('INTERNAL and OUTPUT_UNWRITABLE', () => {
  it('internalError asks for a report, names where, keeps the stack of what was thrown, and is not wrapped twice', () => {
    const thrown = new RangeError('Invalid array length');
    const e = internalError(thrown, "in the spool's thread");
    expect(e.code).toBe('INTERNAL');
    expect(e.message).toBe(
      "bre-batch met a bug in the spool's thread: Invalid array length. Please report it with the command you ran and what it printed; run it again with BRE_DEBUG=1 to print the stack as well.",
    );
    expect(e.stack).toBe(thrown.stack);
    expect(e.cause).toBe(thrown);
    expect(internalError(e)).toBe(e);
    expect(internalError('a string').message).toContain('bre-batch met a bug: a string.');
  });

  it('a folder write failing for another reason than a full disk is OUTPUT_UNWRITABLE (exit 3), a full disk DISK_FULL', () => {
    const efbig = Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' });
    const e = writeFailureStop('/data/out/night', efbig);
    expect(e.code).toBe('OUTPUT_UNWRITABLE');
    expect(e.message).toBe(
      'cannot write to the output folder /data/out/night: EFBIG: file too large, write. Nothing is lost: fix the folder (room for large files, permissions, the disk), then re-run the same command and it resumes where it stopped.',
    );
    expect(exitCodeOf(e)).toBe(3);
    const eio = writeFailureStop('/data/out/night', Object.assign(new Error('i/o error'), { code: 'EIO' }));
    expect(eio.message).toContain('/data/out/night: i/o error (EIO).');
    expect(writeFailureStop('/d', Object.assign(new Error('full'), { code: 'ENOSPC' })).code).toBe('DISK_FULL');
    // A thread that already said which keeps its words.
    const fromThread = outputUnwritable('/d', efbig);
    expect(writeFailureStop('/elsewhere', fromThread)).toBe(fromThread);
  });
});
