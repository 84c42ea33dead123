import { describe, expect, it } from 'vitest';
import type { BreError } from '@bre-batch/core/errors';
import { DeadlinePassed, Deadlines } from '../../../src/http/deadlines.js';
import { deadline } from '../../../src/http/layers/deadline.js';
import type { Attempt } from '../../../src/http/layers/types.js';
import type { HttpResponse } from '../../../src/http/transport.js';
import { manualClock, settle } from '../../helpers/clock.js';
import { attempt } from './attempt.js';

/** A transport that answers only when told, binding its request to the attempt's deadline as the real one does. */
function heldTransport(bindAtOnce = true) {
  const held: { a: Attempt; answer: (res: HttpResponse) => void; aborted: unknown[]; start: () => boolean }[] = [];
  const next = (a: Attempt) =>
    new Promise<HttpResponse>((resolve) => {
      const aborted: unknown[] = [];
      const start = () => a.deadline!.bind((reason) => aborted.push(reason));
      if (bindAtOnce) start();
      held.push({ a, answer: resolve, aborted, start });
    });
  return { next, held };
}

describe('deadline layer', () => {
  it('an attempt not answered in full within its time-out fails with TIMEOUT then, and its request is aborted', async () => {
    const mc = manualClock();
    const { next, held } = heldTransport();
    const pending = deadline(new Deadlines(mc.clock))(next)(attempt({ service: 'bureau', timeoutMs: 500 })).catch(
      (e) => e,
    );
    await mc.advance(499);
    expect(held[0].aborted).toEqual([]);
    await mc.advance(1);
    const err = (await pending) as BreError;
    expect([err.code, err.service]).toEqual(['TIMEOUT', 'bureau']);
    expect(err.message).toContain('500 ms');
    expect(held[0].aborted).toHaveLength(1);
    expect(held[0].aborted[0]).toBeInstanceOf(DeadlinePassed);
  });

  it('an answer in time passes through; its deadline no longer fires and is dropped from the queue', async () => {
    const mc = manualClock();
    const deadlines = new Deadlines(mc.clock);
    const { next, held } = heldTransport();
    const pending = deadline(deadlines)(next)(attempt({ timeoutMs: 500 }));
    await mc.advance(100);
    const res: HttpResponse = { status: 200, headers: {}, text: '{}' };
    held[0].answer(res);
    expect(await pending).toBe(res);
    await mc.advance(1000);
    expect(held[0].aborted).toEqual([]);
    expect(deadlines.queued).toBe(0);
  });

  it('a deadline that passes while the request waits for a connection keeps it from being written', async () => {
    const mc = manualClock();
    const { next, held } = heldTransport(false);
    const pending = deadline(new Deadlines(mc.clock))(next)(attempt({ timeoutMs: 200 })).catch((e) => e);
    await mc.advance(200);
    expect(((await pending) as BreError).code).toBe('TIMEOUT');
    // The connection comes later: the transport asks, and is told not to write.
    expect(held[0].start()).toBe(false);
    expect(held[0].aborted).toEqual([]);
  });

  it('an answer that comes after the deadline is ignored: the attempt failed once, with TIMEOUT', async () => {
    const mc = manualClock();
    const { next, held } = heldTransport();
    const pending = deadline(new Deadlines(mc.clock))(next)(attempt({ timeoutMs: 50 })).catch((e) => e);
    await mc.advance(50);
    held[0].answer({ status: 200, headers: {}, text: '{}' });
    await settle();
    expect(((await pending) as BreError).code).toBe('TIMEOUT');
  });
});
