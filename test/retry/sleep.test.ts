import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { sleep } from '../../src/retry/sleep.js';

describe('sleep', () => {
  it('resolves after the time and removes its abort listener', async () => {
    vi.useFakeTimers();
    try {
      const ac = new AbortController();
      let done = false;
      const sleeping = sleep(20, ac.signal).then(() => {
        done = true;
      });
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(19);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await sleeping;
      expect(done).toBe(true);
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects with the reason at once when aborted while sleeping, and when already aborted', async () => {
    const ac = new AbortController();
    const sleeping = sleep(60_000, ac.signal);
    const reason = new Error('stopping');
    ac.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    await expect(sleep(60_000, ac.signal)).rejects.toBe(reason);
  });

  it('sleeps without a signal', async () => {
    vi.useFakeTimers();
    try {
      let done = false;
      const sleeping = sleep(5).then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(5);
      await sleeping;
      expect(done).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
