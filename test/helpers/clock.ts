/** A clock and timers that move only when a test says so (for limiters: src/limits/paced.ts's Clock). */
import type { Clock } from '../../src/limits/paced.js';

interface Timer {
  readonly at: number;
  readonly fn: () => void;
  cleared: boolean;
}

export interface ManualClock {
  readonly clock: Clock;
  now(): number;
  wall(): number;
  /** Timers armed so far (each setTimer call). */
  readonly armed: () => number;
  /**
   * Moves time forward by `ms`, firing each due timer at its time, `lateMs(at)` after it (a busy event
   * loop), and letting promise callbacks run after each one.
   */
  advance(ms: number, lateMs?: (at: number) => number): Promise<void>;
}

/** Lets every pending promise callback run (a macrotask boundary flushes them all). */
export function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** `now()` starts at 0, as performance.now() nearly does; `wall()` at `epoch`. */
export function manualClock(epoch = 1_700_000_000_000): ManualClock {
  let t = 0;
  let armed = 0;
  const timers: Timer[] = [];
  const clock: Clock = {
    now: () => t,
    wall: () => epoch + t,
    setTimer: (fn, ms) => {
      armed += 1;
      const timer: Timer = { at: t + ms, fn, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer: (h) => {
      (h as Timer).cleared = true;
    },
  };
  return {
    clock,
    now: () => t,
    wall: () => epoch + t,
    armed: () => armed,
    async advance(ms, lateMs = () => 0) {
      const end = t + ms;
      await settle();
      for (;;) {
        const live = timers.filter((x) => !x.cleared);
        timers.length = 0;
        timers.push(...live);
        live.sort((a, b) => a.at - b.at);
        const next = live[0];
        if (!next) break;
        const fireAt = Math.max(t, next.at + lateMs(next.at));
        if (fireAt > end) break;
        t = fireAt;
        next.cleared = true;
        next.fn();
        await settle();
      }
      t = end;
    },
  };
}
