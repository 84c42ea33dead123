/**
 * The error table (src/errors.ts), row by row, and the places that read it: the retry chain, the row runner's
 * fatal codes, the circuit breaker and the CLI's exit code.
 */
import { describe, expect, it } from 'vitest';
import { BreError, ERROR_CODES, diskFullCode, diskFullError, exitCodeOf, isFatal, isRetryable, isServiceFailure, toBreError, treatmentOf, type ErrorCode } from '../src/errors.js';
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
  ['CIRCUIT_OPEN', 'no', false, false, 3],
  ['INTERRUPTED', 'no', false, false, 3],
  ['THROTTLED', 'no', true, false, 3],
  ['DISK_FULL', 'no', false, false, 3],
  ['SOURCE_UNAVAILABLE', 'no', false, false, 3],
  ['SINK_UNAVAILABLE', 'no', false, false, 3],
];

describe('the error table', () => {
  it('has a row for every code, and this test one for every row', () => {
    expect([...ERROR_CODES].sort()).toEqual(EXPECTED.map(([code]) => code).sort());
  });

  it.each(EXPECTED)('%s: retry %s, fatal %s, circuit %s, exit %i', (code, retry, fatal, circuit, exit) => {
    expect(treatmentOf(code)).toEqual({ retry, fatal, serviceFailure: circuit, exit });
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
    expect(e.message).toBe('the disk is full: cannot write to the output folder /data/out/night (EDQUOT: disk quota exceeded). Nothing is lost: once there is room, re-run the same command and it resumes where it stopped.');
  });
});
