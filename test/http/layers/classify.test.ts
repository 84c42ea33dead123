import { describe, expect, it } from 'vitest';
import type { BreError } from '@bre-batch/core/errors';
import { classify } from '../../../src/http/layers/classify.js';
import type { HttpResponse } from '../../../src/http/transport.js';
import { attempt, scripted } from './attempt.js';

const answer =
  (status: number, text: string, headers: HttpResponse['headers'] = {}) =>
  (): HttpResponse => ({ status, headers, text });

describe('classify layer', () => {
  it('a 2xx JSON answer becomes its parsed body', async () => {
    expect(await classify(scripted([answer(200, '{"decision":"approve"}')]))(attempt())).toEqual({
      decision: 'approve',
    });
  });

  it("an error answer becomes the BreError of its code, for the attempt's service", async () => {
    const layer = classify(
      scripted([answer(429, '{}', { 'retry-after': '3' }), answer(500, '{"detail":"bad report"}'), answer(401, '{}')]),
    );
    const throttled = (await layer(attempt({ service: 'bureau' })).catch((e) => e)) as BreError;
    expect([throttled.code, throttled.service, throttled.retryAfterSeconds]).toEqual(['RATE_LIMITED', 'bureau', 3]);
    const decode = (await layer(attempt({ service: 'bureau' })).catch((e) => e)) as BreError;
    expect(decode.code).toBe('BUREAU_DECODE_FAILED');
    const refused = (await layer(attempt({ service: 'account' })).catch((e) => e)) as BreError;
    expect([refused.code, refused.status]).toEqual(['AUTH_REFUSED', 401]);
  });

  it('a 2xx answer that is not a JSON object is BAD_RESPONSE', async () => {
    const err = (await classify(scripted([answer(200, '<html>')]))(attempt()).catch((e) => e)) as BreError;
    expect(err.code).toBe('BAD_RESPONSE');
  });

  it('a failure below (no answer at all) passes through untouched', async () => {
    const boom = new Error('socket hang up');
    await expect(
      classify(
        scripted<HttpResponse>([
          () => {
            throw boom;
          },
        ]),
      )(attempt()),
    ).rejects.toBe(boom);
  });

  it("a redirect is REDIRECTED (a stop), naming only the target's origin; it is never followed", async () => {
    const layer = classify(
      scripted([
        answer(307, '', { location: 'https://elsewhere.example:8443/api?sig=secret' }),
        answer(302, '', { location: '/login' }),
      ]),
    );
    const away = (await layer(attempt()).catch((e) => e)) as BreError;
    expect([away.code, away.status]).toEqual(['REDIRECTED', 307]);
    expect(away.message).toContain('https://elsewhere.example:8443');
    expect(away.message).not.toContain('sig=secret');
    const local = (await layer(attempt()).catch((e) => e)) as BreError;
    expect(local.message).toContain('a path on the same origin');
  });
});
