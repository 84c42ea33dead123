/**
 * The retry policy with a clock that moves only when the policy sleeps: the schedule, the deadline, what is
 * told on a loss and a recovery, and what is thrown, observed without waiting.
 */
import { describe, expect, it } from 'vitest';
import { BACKOFF, backoffMs, retrying, type RetryClock, type RetryPolicy } from '../../src/retry/policy.js';

function fakeClock(): RetryClock & { t: number; sleeps: number[] } {
  const c = {
    t: 0,
    sleeps: [] as number[],
    now: () => c.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw signal.reason;
      c.sleeps.push(ms);
      c.t += ms;
    },
  };
  return c;
}

class Lost extends Error {}
class Refused extends Error {}

function policy(clock: RetryClock, over: Partial<RetryPolicy> = {}): RetryPolicy & { told: string[] } {
  const told: string[] = [];
  return {
    told,
    forMs: 10_000,
    retryable: (err) => err instanceof Lost,
    giveUp: (err, waited) => new Error(`gave up after ${waited} ms: ${(err as Error).message}`),
    onLoss: (err) => told.push(`loss: ${(err as Error).message}`),
    onRetry: (_err, n) => told.push(`retry ${n}`),
    onRecovery: (n) => told.push(`back after ${n}`),
    clock,
    ...over,
  };
}

describe('retrying', () => {
  it('the schedule: 250 ms doubling to 8 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 12].map(backoffMs)).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(BACKOFF.maxMs).toBe(8000);
  });

  it('a success at once: no pause, nothing told', async () => {
    const clock = fakeClock();
    const p = policy(clock);
    expect(await retrying(p, async () => 'ok')).toBe('ok');
    expect(clock.sleeps).toEqual([]);
    expect(p.told).toEqual([]);
  });

  it('retryable failures, then a success: the pauses of the schedule, the loss told once, the recovery', async () => {
    const clock = fakeClock();
    const p = policy(clock);
    const seen: number[] = [];
    const out = await retrying(p, async (failures) => {
      seen.push(failures);
      if (failures < 3) throw new Lost(`down ${failures}`);
      return 42;
    });
    expect(out).toBe(42);
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(clock.sleeps).toEqual([250, 500, 1000]);
    expect(p.told).toEqual(['loss: down 0', 'retry 1', 'retry 2', 'retry 3', 'back after 3']);
  });

  it('gives up at the deadline, after one attempt at about the deadline (the last pause cut to it)', async () => {
    const clock = fakeClock();
    const p = policy(clock, { forMs: 3000 });
    let attempts = 0;
    const err = await retrying(p, async () => {
      attempts += 1;
      throw new Lost('still down');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('gave up after 3000 ms: still down');
    // 250 + 500 + 1000 = 1750; the next 2000 is cut to the 1250 left.
    expect(clock.sleeps).toEqual([250, 500, 1000, 1250]);
    expect(attempts).toBe(5);
  });

  it('a failure that is not retryable is thrown at once, as `refused` makes it', async () => {
    const clock = fakeClock();
    const refused = new Refused('no such table');
    await expect(
      retrying(policy(clock), async () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    const wrapped = await retrying(
      policy(clock, { refused: (e) => new Error(`wrapped: ${(e as Error).message}`) }),
      async () => {
        throw refused;
      },
    ).catch((e: unknown) => e);
    expect((wrapped as Error).message).toBe('wrapped: no such table');
    expect(clock.sleeps).toEqual([]);
  });

  it('a refusal after losses is thrown as it is (no giving up, no recovery told)', async () => {
    const clock = fakeClock();
    const p = policy(clock);
    const refused = new Refused('constraint');
    await expect(
      retrying(p, async (failures) => {
        if (failures === 0) throw new Lost('down');
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(p.told).toEqual(['loss: down', 'retry 1']);
  });

  it('a deadline of 0 gives up at the first failure', async () => {
    const clock = fakeClock();
    const err = await retrying(policy(clock, { forMs: 0 }), async () => {
      throw new Lost('down');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('gave up after 0 ms: down');
    expect(clock.sleeps).toEqual([]);
  });

  it('an aborted signal ends the pause with its reason', async () => {
    const clock = fakeClock();
    const ac = new AbortController();
    const reason = new Error('the run is stopping');
    ac.abort(reason);
    await expect(
      retrying(policy(clock, { signal: ac.signal }), async () => {
        throw new Lost('down');
      }),
    ).rejects.toBe(reason);
  });
});
