import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { Meter } from '../../../src/http/layers/measure.js';
import { retry } from '../../../src/http/layers/retry.js';
import { attempt, scripted } from './attempt.js';

const unavailable = () => {
  throw new BreError('SERVER_UNAVAILABLE', '503', { service: 'bureau', status: 503 });
};

function layerWith(
  answers: Parameters<typeof scripted<unknown>>[0],
  maxAttempts = 4,
  signal = new AbortController().signal,
) {
  const slept: number[] = [];
  const meter = new Meter();
  const next = scripted<unknown>(answers);
  const layer = retry({
    maxAttempts,
    signal,
    meter,
    random: () => 0.5,
    sleep: async (ms) => {
      slept.push(ms);
    },
  })(next);
  return { layer, next, slept, meter };
}

describe('retry layer', () => {
  it('a retryable failure is tried again after the documented backoff, each attempt numbered, until one succeeds', async () => {
    const { layer, next, slept, meter } = layerWith([unavailable, unavailable, () => ({ ok: true })]);
    expect(await layer(attempt({ service: 'bureau' }))).toEqual({ body: { ok: true }, attempts: 3 });
    expect(next.seen.map((a) => a.number)).toEqual([1, 2, 3]);
    // base 1 s doubled, no jitter at random() = 0.5
    expect(slept).toEqual([1000, 2000]);
    expect(meter.stats.bureau.retries).toBe(2);
  });

  it("a server's longer Retry-After wins over the backoff; a shorter one (0 included) never shortens it", async () => {
    const { layer, slept } = layerWith([
      () => {
        throw new BreError('SERVER_UNAVAILABLE', '503', { service: 'bureau', status: 503, retryAfterSeconds: 5 });
      },
      () => {
        throw new BreError('SERVER_UNAVAILABLE', '503', { service: 'bureau', status: 503, retryAfterSeconds: 0 });
      },
      () => ({}),
    ]);
    await layer(attempt({ service: 'bureau' }));
    expect(slept[0]).toBe(5000);
    expect(slept[1]).toBeGreaterThanOrEqual(1600);
  });

  it("429s are not counted against --max-attempts and sleep nothing here (the service's pause is the back-off)", async () => {
    const throttled = () => {
      throw new BreError('RATE_LIMITED', '429', { service: 'bureau', status: 429, retryAfterSeconds: 0 });
    };
    const { layer, slept, next } = layerWith(
      [...Array.from({ length: 20 }, () => throttled), unavailable, unavailable, () => ({ ok: 1 })],
      3,
    );
    const res = await layer(attempt({ service: 'bureau' }));
    expect(res).toEqual({ body: { ok: 1 }, attempts: 23 });
    expect(next.seen).toHaveLength(23);
    // only the two 503s slept, each the documented backoff for the counted attempts (1 s, 2 s +-20%)
    expect(slept).toHaveLength(2);
    expect(slept[0]).toBeGreaterThanOrEqual(800);
    expect(slept[1]).toBeGreaterThanOrEqual(1600);
  });

  it('stops at --max-attempts with the last error, its attempt count and service', async () => {
    const { layer, next } = layerWith([unavailable, unavailable, unavailable], 3);
    const err = (await layer(attempt({ service: 'bureau' })).catch((e) => e)) as BreError;
    expect([err.code, err.attempts, err.service]).toEqual(['SERVER_UNAVAILABLE', 3, 'bureau']);
    expect(next.seen).toHaveLength(3);
  });

  it('a failure that is not retryable (a data error) is thrown after the one attempt, with no sleep', async () => {
    const { layer, slept } = layerWith([
      () => {
        throw new BreError('WORKFLOW_REJECTED_INPUT', '500', { service: 'workflow', status: 500 });
      },
    ]);
    const err = (await layer(attempt()).catch((e) => e)) as BreError;
    expect([err.code, err.attempts]).toEqual(['WORKFLOW_REJECTED_INPUT', 1]);
    expect(slept).toEqual([]);
  });

  it('a bare error from below is a NETWORK failure, retried', async () => {
    const { layer } = layerWith([
      () => {
        throw new Error('ECONNRESET');
      },
      () => ({}),
    ]);
    expect((await layer(attempt())).attempts).toBe(2);
  });

  it('a run that stops while the call waits to retry ends the call at once with INTERRUPTED', async () => {
    const stop = new AbortController();
    const meter = new Meter();
    const next = scripted<unknown>([unavailable]);
    const sleep = (_ms: number, signal: AbortSignal) =>
      new Promise<void>((_r, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        stop.abort();
      });
    const err = (await retry({ maxAttempts: 4, signal: stop.signal, meter, sleep })(next)(
      attempt({ service: 'bureau' }),
    ).catch((e) => e)) as BreError;
    expect([err.code, err.attempts]).toEqual(['INTERRUPTED', 1]);
    expect(next.seen).toHaveLength(1);
  });
});
