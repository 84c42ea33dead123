/**
 * The progress bar's ETA (src/pipeline/progress.ts), with the clock given: after a resume it counts the rows
 * left at the rate this session measured (the resumed rows are done, not speed), and its durations are well
 * formed (the issue's `ETA 2s` then `2m60s` for ~2,500 rows left at 600/min).
 */
import { describe, expect, it } from 'vitest';
import { etaMs, formatEta } from '../../src/pipeline/progress.js';

describe('the ETA', () => {
  it('after a resume: the rows left at the measured rate, not the resumed rows taken for speed', () => {
    // 3,000 rows; 480 done by the earlier session, 20 now in 2 s (600/min): 2,500 left take 250 s.
    const ms = etaMs({ total: 3000, done: 500, doneThisSession: 20, msSinceFirstStart: 2000 });
    expect(ms).toBe(250_000);
    expect(formatEta(ms!)).toBe('4m10s');
  });

  it('as the session goes on at 600/min, the ETA falls with the rows left', () => {
    const at = (settled: number) =>
      etaMs({ total: 3000, done: 480 + settled, doneThisSession: settled, msSinceFirstStart: settled * 100 })!;
    expect([at(20), at(620), at(1220), at(2420)].map(formatEta)).toEqual(['4m10s', '3m10s', '2m10s', '10s']);
  });

  it('unknown until a rate is measured; 0 when nothing is left; none without a total', () => {
    expect(etaMs({ total: 3000, done: 480, doneThisSession: 0, msSinceFirstStart: 0 })).toBeUndefined();
    expect(etaMs({ total: 3000, done: 481, doneThisSession: 1, msSinceFirstStart: 100 })).toBeUndefined();
    expect(etaMs({ total: 3000, done: 3000, doneThisSession: 5, msSinceFirstStart: 100 })).toBe(0);
    expect(etaMs({ total: 0, done: 10, doneThisSession: 10, msSinceFirstStart: 100 })).toBeUndefined();
  });

  it('durations are whole and well formed', () => {
    expect(formatEta(0)).toBe('0s');
    expect(formatEta(59_400)).toBe('59s');
    expect(formatEta(59_600)).toBe('1m00s');
    expect(formatEta(179_700)).toBe('3m00s');
    expect(formatEta(119_600)).toBe('2m00s');
    expect(formatEta(3_599_600)).toBe('1h00m');
    expect(formatEta(7_470_000)).toBe('2h05m');
    expect(formatEta(86_399_000)).toBe('1d00h');
    expect(formatEta(3 * 86_400_000 + 4 * 3_600_000)).toBe('3d04h');
    for (let ms = 0; ms < 10_000_000; ms += 7_919) expect(formatEta(ms)).not.toMatch(/60s|60m|24h/);
  });
});
