import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../src/http/deadlines.js';
import { manualClock } from '../helpers/clock.js';

/** An attempt as the transport's handler is one: done when it settles, and it says so to the deadlines. */
function attempt(d: Deadlines, name: string, expired: string[]) {
  const a = {
    done: false,
    expire() {
      expired.push(name);
      a.finish();
    },
    finish() {
      if (a.done) return;
      a.done = true;
      d.settled();
    },
  };
  return a;
}

describe('Deadlines: one timer cuts every attempt whose whole time is up', () => {
  it('an attempt still running at its deadline is expired then, not a millisecond before', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    d.add(2000, attempt(d, 'a', expired));
    await mc.advance(1999);
    expect(expired).toEqual([]);
    await mc.advance(1);
    expect(expired).toEqual(['a']);
  });

  it('an attempt that finished in time is never expired', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    const a = attempt(d, 'a', expired);
    d.add(100, a);
    await mc.advance(50);
    a.finish();
    await mc.advance(1000);
    expect(expired).toEqual([]);
    expect(d.queued).toBe(0);
  });

  it('attempts of several lengths each expire at their own deadline, in deadline order', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    d.add(300, attempt(d, 'long', expired));
    await mc.advance(10);
    d.add(100, attempt(d, 'short-1', expired));
    await mc.advance(10);
    d.add(100, attempt(d, 'short-2', expired));
    const done = attempt(d, 'done', expired);
    d.add(50, done);
    done.finish();
    await mc.advance(89);
    expect(expired).toEqual([]);
    await mc.advance(1);
    expect(expired).toEqual(['short-1']);
    await mc.advance(10);
    expect(expired).toEqual(['short-1', 'short-2']);
    await mc.advance(180);
    expect(expired).toEqual(['short-1', 'short-2', 'long']);
  });

  it('finished attempts behind a slow one are not kept: the queue stays near the attempts live', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    d.add(60_000, attempt(d, 'slow', expired));
    // 100,000 quick attempts behind it, as at thousands of calls a second
    for (let i = 0; i < 100_000; i += 1) {
      const a = attempt(d, `q${i}`, expired);
      d.add(60_000, a);
      a.finish();
    }
    expect(d.queued).toBeLessThan(10_000);
    await mc.advance(60_000);
    expect(expired).toEqual(['slow']);
  });

  it('one timer wake-up per deadline reached, not one per attempt', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    for (let i = 0; i < 1000; i += 1) {
      const a = attempt(d, `a${i}`, expired);
      d.add(1000, a);
      a.finish();
    }
    const armed = mc.armed();
    await mc.advance(5000);
    expect(expired).toEqual([]);
    // the timer armed for the first attempt found them all done and was not armed again
    expect(mc.armed() - armed).toBe(0);
  });

  it('clear: nothing is expired any more (the transport is closing)', async () => {
    const mc = manualClock();
    const d = new Deadlines(mc.clock);
    const expired: string[] = [];
    d.add(100, attempt(d, 'a', expired));
    d.clear();
    await mc.advance(1000);
    expect(expired).toEqual([]);
  });
});
