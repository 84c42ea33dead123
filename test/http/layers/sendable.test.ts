import { describe, expect, it } from 'vitest';
import { BreError, isRetryable } from '@bre-batch/core/errors';
import { limit } from '../../../src/http/layers/limit.js';
import { sendable, wasNotSent } from '../../../src/http/layers/sendable.js';
import type { ServiceLimiter } from '../../../src/limits/limiter.js';
import { attempt, scripted } from './attempt.js';

/** A limiter that keeps every job queued until the test lets the next one go. */
function heldLimiter() {
  const queued: (() => void)[] = [];
  const limiter = {
    service: 'workflow',
    pausedUntil: 0,
    throttledSince: null,
    schedule<T>(fn: (sent: () => void) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => queued.push(() => fn(() => undefined).then(resolve, reject)));
    },
    onThrottled() {},
    onAnswered() {},
    onSuccess() {},
  } as unknown as ServiceLimiter;
  return { limiter, release: () => queued.shift()!() };
}

describe('sendable layer', () => {
  it('an attempt without the question, or answered yes, goes on unchanged', async () => {
    const next = scripted([() => 1, () => 2, () => 3]);
    const layer = sendable()(next);
    expect(await layer(attempt())).toBe(1);
    expect(await layer(attempt({ sendable: () => true }))).toBe(2);
    expect(await layer(attempt({ sendable: () => Promise.resolve(true) }))).toBe(3);
    expect(next.seen).toHaveLength(3);
  });

  it('answered no, now or later: not sent, INTERRUPTED, which is never retried, told apart from a stop', async () => {
    const next = scripted([() => 1]);
    const layer = sendable()(next);
    for (const no of [() => false, () => Promise.resolve(false)]) {
      const err = (await layer(attempt({ sendable: no })).catch((e: unknown) => e)) as BreError;
      expect(err.code).toBe('INTERRUPTED');
      expect(isRetryable(err)).toBe(false);
      expect(wasNotSent(err)).toBe(true);
      // With more context added above (retry's attempts, the row's stage) it still says so.
      expect(wasNotSent(err.with({ attempts: 1, stage: 's' }))).toBe(true);
    }
    expect(next.seen).toEqual([]);
    expect(wasNotSent(new BreError('INTERRUPTED', 'workflow call abandoned: the run is stopping'))).toBe(false);
  });

  it('below the limiter: asked when the limiter lets the attempt go, not when it was queued', async () => {
    const { limiter, release } = heldLimiter();
    let holds = true;
    let asked = 0;
    const next = scripted([() => 'sent']);
    const layer = limit({
      limiterOf: () => limiter,
      signal: new AbortController().signal,
      sleep: async () => {},
    })(sendable()(next));
    const first = layer(
      attempt({
        sendable: () => {
          asked += 1;
          return holds;
        },
      }),
    );
    const second = layer(attempt({ sendable: () => holds }));
    expect(asked).toBe(0);
    release();
    expect(await first).toBe('sent');
    expect(asked).toBe(1);
    // The row's claim is lost while the second attempt waits in the queue.
    holds = false;
    release();
    expect(((await second.catch((e: unknown) => e)) as BreError).code).toBe('INTERRUPTED');
    expect(next.seen).toHaveLength(1);
  });
});
