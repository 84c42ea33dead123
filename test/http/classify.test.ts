import { describe, expect, it } from 'vitest';
import { classifyResponse } from '../../src/http/classify.js';
import type { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';

function codeOf(service: ServiceName, status: number, body: unknown, headers: Record<string, string> = {}): BreError {
  try {
    classifyResponse(service, { status, headers, text: typeof body === 'string' ? body : JSON.stringify(body) });
  } catch (err) {
    return err as BreError;
  }
  throw new Error('expected a BreError');
}

describe('HTTP answers -> stable codes (spec section 7 of both documents)', () => {
  it.each([
    ['workflow', 401, { detail: 'Invalid client credentials', request_id: 'r' }, 'AUTH_REFUSED'],
    ['account', 401, { error: { type: 'unauthorized', detail: 'Invalid client credentials' } }, 'AUTH_REFUSED'],
    ['bureau', 403, '<html><title>403 Forbidden</title><h1>403 Forbidden</h1></html>', 'IP_NOT_ALLOWED'],
    ['workflow', 429, '', 'RATE_LIMITED'],
    ['workflow', 503, 'upstream down', 'SERVER_UNAVAILABLE'],
    ['bureau', 502, '', 'SERVER_UNAVAILABLE'],
    ['workflow', 504, '', 'SERVER_UNAVAILABLE'],
    ['workflow', 500, { detail: 'latitude out of range' }, 'WORKFLOW_REJECTED_INPUT'],
    ['bureau', 500, { detail: 'error in decoding raw_data: bad base64' }, 'BUREAU_DECODE_FAILED'],
    ['workflow', 500, '<html>oops</html>', 'SERVER_ERROR'],
    [
      'account',
      404,
      { detail: { error: 'no bsa sessions found for this user and aa_session_id', request_id: 'r', user_id: 'null' } },
      'ACCOUNT_ERROR',
    ],
    ['workflow', 404, { detail: "workflow endpoint 'x' not found" }, 'HTTP_ERROR'],
  ] as const)('%s %i -> %s', (service, status, body, code) => {
    const e = codeOf(service, status, body);
    expect(e.code).toBe(code);
    expect(e.status).toBe(status);
  });

  it('422 lists the missing fields from loc paths, in either service shape', () => {
    const wf = codeOf('workflow', 422, {
      detail: [{ type: 'missing', loc: ['body', 'input_data', 'latitude'], msg: 'Field required', input: {} }],
    });
    expect(wf.code).toBe('VALIDATION_FAILED');
    expect(wf.message).toMatch(/input_data\.latitude/);
    const acc = codeOf('account', 422, {
      error: {
        type: 'validation_error',
        detail: [{ type: 'missing', loc: ['body', 'aa_session_id'], msg: 'Field required', input: {} }],
      },
    });
    expect(acc.details).toEqual(['aa_session_id']);
  });

  it('Retry-After is carried on a 429', () => {
    expect(codeOf('workflow', 429, '', { 'retry-after': '4' }).retryAfterSeconds).toBe(4);
  });

  it('a 200 whose body is not JSON is BAD_RESPONSE with a short excerpt', () => {
    const e = codeOf('workflow', 200, `{"request_id": "abc", "output_data": ${'x'.repeat(500)}`);
    expect(e.code).toBe('BAD_RESPONSE');
    expect(e.message.length).toBeLessThan(260);
  });

  it('a 2xx JSON body is returned', () => {
    expect(classifyResponse('bureau', { status: 200, headers: {}, text: '{"score":700}' })).toEqual({ score: 700 });
  });
});
