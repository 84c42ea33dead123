import { describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { pollUntilReady, type PollClock, type PollOutcome } from '../../src/services/account/poll.js';
import { REDACTED, scrubSecrets } from '../../src/services/account/secrets.js';

/** A clock that only moves when the poller sleeps; records every wait. */
function fakeClock(): PollClock & { waits: number[]; t: number } {
  const c = {
    t: 0,
    waits: [] as number[],
    now: () => c.t,
    sleep: async (ms: number, signal: AbortSignal) => {
      if (signal.aborted) throw new Error('aborted');
      c.waits.push(ms);
      c.t += ms;
    },
  };
  return c;
}

const pending: PollOutcome<string> = { state: 'pending', status: 'processing' };

describe('pollUntilReady', () => {
  it('doubles the wait up to the cap and returns once ready', async () => {
    const clock = fakeClock();
    let n = 0;
    const result = await pollUntilReady(
      async () => (++n < 6 ? pending : { state: 'ready', value: 'done' }),
      { intervalMs: 100, maxIntervalMs: 500, timeoutMs: 60_000 },
      new AbortController().signal,
      clock,
    );
    expect(result).toEqual({ value: 'done', polls: 6 });
    expect(clock.waits).toEqual([100, 200, 400, 500, 500]);
  });

  it('gives NOT_READY at the time limit, after a last poll at the limit', async () => {
    const clock = fakeClock();
    let polls = 0;
    const err = await pollUntilReady(
      async () => {
        polls += 1;
        return pending;
      },
      { intervalMs: 1000, maxIntervalMs: 10_000, timeoutMs: 5000 },
      new AbortController().signal,
      clock,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('NOT_READY');
    expect((err as BreError).message).toContain('--retry-errors');
    expect((err as BreError).details).toEqual({ calls: polls });
    // waits 1000, 2000, then cut to the 2000 left: polls at t=0, 1000, 3000, 5000
    expect(clock.waits).toEqual([1000, 2000, 2000]);
    expect(polls).toBe(4);
  });

  it('ready on the first poll makes no wait', async () => {
    const clock = fakeClock();
    const r = await pollUntilReady(
      async () => ({ state: 'ready', value: 1 }),
      { intervalMs: 10, maxIntervalMs: 10, timeoutMs: 10 },
      new AbortController().signal,
      clock,
    );
    expect(r.polls).toBe(1);
    expect(clock.waits).toEqual([]);
  });

  it('propagates an error from a poll unchanged', async () => {
    const boom = new BreError('ACCOUNT_ERROR', 'failed');
    await expect(
      pollUntilReady(
        async () => {
          throw boom;
        },
        { intervalMs: 10, maxIntervalMs: 10, timeoutMs: 100 },
        new AbortController().signal,
        fakeClock(),
      ),
    ).rejects.toBe(boom);
  });

  it('stops with INTERRUPTED when the signal aborts during a wait (real timers)', async () => {
    const ac = new AbortController();
    let polls = 0;
    // Aborted once the first poll has answered, i.e. while the poller waits its hour: only an abort that
    // cuts the wait short lets this test end.
    const poll = async (): Promise<PollOutcome<string>> => {
      polls += 1;
      setImmediate(() => ac.abort(new Error('stop')));
      return pending;
    };
    const err = await pollUntilReady(
      poll,
      { intervalMs: 3_600_000, maxIntervalMs: 3_600_000, timeoutMs: 7_200_000 },
      ac.signal,
    ).catch((e: unknown) => e);
    expect((err as BreError).code).toBe('INTERRUPTED');
    expect(polls).toBe(1);
  });

  it('does not poll at all when already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    let polls = 0;
    const err = await pollUntilReady(
      async () => {
        polls += 1;
        return pending;
      },
      { intervalMs: 10, maxIntervalMs: 10, timeoutMs: 100 },
      ac.signal,
      fakeClock(),
    ).catch((e: unknown) => e);
    expect((err as BreError).code).toBe('INTERRUPTED');
    expect(polls).toBe(0);
  });

  it('a frozen clock cannot make it poll forever', async () => {
    const frozen: PollClock = { now: () => 0, sleep: async () => {} };
    let polls = 0;
    const err = await pollUntilReady(
      async () => {
        polls += 1;
        return pending;
      },
      { intervalMs: 100, maxIntervalMs: 100, timeoutMs: 1000 },
      new AbortController().signal,
      frozen,
    ).catch((e: unknown) => e);
    expect((err as BreError).code).toBe('NOT_READY');
    expect(polls).toBe(12);
  });
});

describe('scrubSecrets', () => {
  const url = 'https://reports.example/abc123?sig=XYZ';
  it('replaces any string that holds a secret, at any depth, and leaves others', () => {
    const out = scrubSecrets(
      {
        a: url,
        b: `see ${url}`,
        c: 'fine',
        d: 5,
        e: [url, 'ok'],
        f: { g: url },
        h: null,
      },
      [{ name: 'report_url', value: url }],
    );
    expect(out).toEqual({
      a: REDACTED,
      b: REDACTED,
      c: 'fine',
      d: 5,
      e: [REDACTED, 'ok'],
      f: { g: REDACTED },
      h: null,
    });
  });

  it('does not search for very short secrets (a 3-letter password would redact words)', () => {
    expect(scrubSecrets({ a: 'the pin' }, [{ name: 'p', value: 'pin' }])).toEqual({ a: 'the pin' });
  });
});
