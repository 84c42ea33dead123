/**
 * The backpressure between the run and a writer behind it (src/output/backpressure.ts): the run waits from the
 * high mark, goes on under the low one, and never waits once the writer failed or ended.
 */
import { describe, expect, it } from 'vitest';
import { Backpressure, HIGH_WATER, LOW_WATER } from '../../src/output/backpressure.js';

/** Whether `p` has settled, after the microtasks queued so far. */
async function settled(p: Promise<void> | undefined): Promise<boolean> {
  if (p === undefined) return true;
  let done = false;
  void p.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('backpressure', () => {
  it('marks the sink at 64 MiB behind and lets it go at 32 MiB', () => {
    expect([HIGH_WATER, LOW_WATER]).toEqual([64 * 2 ** 20, 32 * 2 ** 20]);
  });

  // lag when asked, lag at the wake, lifted before the wake: does the run wait at first, and still after the wake?
  const CASES: readonly [string, number, number, boolean, boolean, boolean][] = [
    ['under the high mark: no wait', 99, 99, false, false, false],
    ['at the high mark: waits, still above the low one after the wake', 100, 60, false, true, true],
    ['at the high mark: waits, goes on under the low one', 100, 49, false, true, false],
    ['exactly at the low mark: still waits', 100, 50, false, true, true],
    ['lifted (the writer failed or ended): goes on whatever the lag', 200, 200, true, true, false],
  ];
  it.each(CASES)('%s', async (_name, asked, atWake, lift, waitsFirst, waitsAfter) => {
    const b = new Backpressure(100, 50);
    let lag = asked;
    const room = b.room(() => lag);
    expect(room !== undefined).toBe(waitsFirst);
    lag = atWake;
    if (lift) b.lift();
    else b.wake();
    expect(await settled(room)).toBe(!waitsAfter);
  });

  it('once lifted, no later room waits', () => {
    const b = new Backpressure(100, 50);
    b.lift();
    expect(b.room(() => 1_000)).toBeUndefined();
  });

  it('wakes every waiter, each with its own lag', async () => {
    const b = new Backpressure(100, 50);
    let a = 150;
    const first = b.room(() => a);
    const second = b.room(() => 120);
    a = 10;
    b.wake();
    expect([await settled(first), await settled(second)]).toEqual([true, false]);
  });
});
