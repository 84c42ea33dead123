import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { limit } from '../../../src/http/layers/limit.js';
import type { ServiceLimiter } from '../../../src/limits/limiter.js';
import { PacedLimiter } from '../../../src/limits/paced.js';
import { waitFor } from '../../helpers/wait.js';
import { attempt, scripted } from './attempt.js';

/** A limiter that starts every job at once and says what it was told. */
function recordingLimiter() {
  const told: string[] = [];
  const sentHooks: (() => void)[] = [];
  const limiter = {
    service: 'workflow',
    pausedUntil: 0,
    schedule<T>(fn: (sent: () => void) => Promise<T>, retry?: boolean): Promise<T> {
      told.push(retry ? 'schedule retry' : 'schedule');
      const sent = () => told.push('sent');
      sentHooks.push(sent);
      return fn(sent);
    },
    throttledSince: null as number | null,
    onThrottled(s?: number) {
      told.push(`throttled ${s}`);
    },
    onAnswered() {
      told.push('answered');
    },
    onSuccess() {
      told.push('success');
    },
  } as unknown as ServiceLimiter & { pausedUntil: number; throttledSince: number | null };
  return { limiter, told, sentHooks };
}

const noSleep = async () => {};

describe('limit layer', () => {
  it("each attempt takes one slot of its service's limiter, a retry as a retry, and is given the limiter's `sent`", async () => {
    const { limiter, told, sentHooks } = recordingLimiter();
    const next = scripted([
      (a) => {
        a.sent!();
        return { ok: 1 };
      },
      () => ({ ok: 2 }),
    ]);
    const layer = limit({ limiterOf: () => limiter, signal: new AbortController().signal, sleep: noSleep })(next);
    expect(await layer(attempt())).toEqual({ ok: 1 });
    expect(await layer(attempt({ number: 2 }))).toEqual({ ok: 2 });
    expect(told).toEqual(['schedule', 'sent', 'success', 'schedule retry', 'success']);
    expect(next.seen[0].sent).toBe(sentHooks[0]);
  });

  it('a 429 tells the limiter (with its Retry-After); another answer says the service answers again; neither counts as a success', async () => {
    const { limiter, told } = recordingLimiter();
    const next = scripted<unknown>([
      () => {
        throw new BreError('RATE_LIMITED', '429', { service: 'workflow', status: 429, retryAfterSeconds: 7 });
      },
      () => {
        throw new BreError('SERVER_UNAVAILABLE', '503', { service: 'workflow', status: 503 });
      },
    ]);
    const layer = limit({ limiterOf: () => limiter, signal: new AbortController().signal, sleep: noSleep })(next);
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('RATE_LIMITED');
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('SERVER_UNAVAILABLE');
    expect(told).toEqual(['schedule', 'throttled 7', 'schedule', 'answered']);
  });

  it('a service that has answered nothing but 429s for --throttle-deadline stops the run: THROTTLED, after a 429 or before the pause', async () => {
    const { limiter } = recordingLimiter();
    const next = scripted<unknown>([
      () => {
        throw new BreError('RATE_LIMITED', '429', { service: 'workflow', status: 429, retryAfterSeconds: 0 });
      },
    ]);
    const layer = limit({
      limiterOf: () => limiter,
      signal: new AbortController().signal,
      sleep: noSleep,
      throttleDeadlineMs: 60_000,
    })(next);
    // throttling for 30 s: the 429 goes up (the call waits)
    limiter.throttledSince = Date.now() - 30_000;
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('RATE_LIMITED');
    // for 2 minutes: the next attempt is not even sent
    limiter.throttledSince = Date.now() - 120_000;
    const err = (await layer(attempt()).catch((e) => e)) as BreError;
    expect(err.code).toBe('THROTTLED');
    expect(err.message).toMatch(
      /kept throttling: it answered every call 429 Too Many Requests for 2m \(--throttle-deadline 1m\)\. No row was written to errors/,
    );
    expect(next.seen).toHaveLength(1);
  });

  it('while the service is paused after a 429, an attempt waits the pause out before it takes a slot', async () => {
    const { limiter, told } = recordingLimiter();
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      limiter.pausedUntil = 0;
    };
    limiter.pausedUntil = Date.now() + 60_000;
    const layer = limit({ limiterOf: () => limiter, signal: new AbortController().signal, sleep })(
      scripted([() => ({})]),
    );
    await layer(attempt());
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThan(50_000);
    expect(told).toEqual(['schedule', 'success']);
  });

  it('an attempt still queued when the run stops is abandoned at once (INTERRUPTED) and never sent; the one started finishes', async () => {
    const limiter = new PacedLimiter({ service: 'workflow', rate: null, concurrency: 1 });
    const stop = new AbortController();
    let release!: () => void;
    const next = scripted<unknown>([
      () =>
        new Promise((r) => {
          release = () => r({ first: true });
        }),
      () => ({ second: true }),
    ]);
    const layer = limit({ limiterOf: () => limiter, signal: stop.signal, sleep: noSleep })(next);
    const first = layer(attempt());
    await waitFor(() => next.seen.length === 1, 5000, 'the first attempt to start');
    const second = layer(attempt()).catch((e) => e);
    stop.abort();
    const err = (await second) as BreError;
    expect([err.code, err.service]).toEqual(['INTERRUPTED', 'workflow']);
    release();
    expect(await first).toEqual({ first: true });
    expect(next.seen).toHaveLength(1);
  });

  it('after the stop no attempt is scheduled at all', async () => {
    const { limiter, told } = recordingLimiter();
    const stop = new AbortController();
    stop.abort();
    const layer = limit({ limiterOf: () => limiter, signal: stop.signal, sleep: noSleep })(scripted([() => ({})]));
    expect(((await layer(attempt()).catch((e) => e)) as BreError).code).toBe('INTERRUPTED');
    expect(told).toEqual([]);
  });
});
