/**
 * A run without a terminal says its plan when it starts and a progress line every minute (src/pipeline/
 * progress-lines.ts), with the clock and the timer given: the champion_challenger sample, whose 1,500 rows take
 * two workflow calls each, 6 minutes at the default 500 calls a minute.
 */
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { DEFAULT_RATES } from '@bre-batch/core/rates';
import { CallStats } from '../../src/metrics/service-stats.js';
import { newCounters } from '../../src/pipeline/build-summary.js';
import { PROGRESS_LINE_MS, ProgressLines, type Ticker } from '../../src/pipeline/progress-lines.js';
import { perService } from '@bre-batch/core/types';

/** A ticker a test fires by hand: the interval asked for, and whether it was stopped. */
function handTicker() {
  const t: { ms: number; fire: () => void; stopped: boolean } = { ms: 0, fire: () => undefined, stopped: false };
  const ticker: Ticker = {
    every(ms, fn) {
      t.ms = ms;
      t.fire = fn;
      return () => {
        t.stopped = true;
      };
    },
  };
  return { t, ticker };
}

function setup(over: { rows?: number; doneBefore?: number; unknown?: boolean } = {}) {
  const lines: string[] = [];
  let now = 0;
  const counters = newCounters();
  const stats = perService(() => new CallStats());
  const { t, ticker } = handTicker();
  const p = new ProgressLines({
    s: { pipeline: loadPipeline('champion_challenger'), rates: DEFAULT_RATES, limit: undefined, shard: undefined },
    log: (line) => void lines.push(line),
    client: { stats },
    counters,
    estimate: () => (over.unknown ? undefined : Promise.resolve(over.rows ?? 1500)),
    doneBefore: over.doneBefore ?? 0,
    now: () => now,
    ticker,
  });
  return { p, lines, counters, stats, t, at: (ms: number) => (now = ms) };
}

describe('progress off a terminal', () => {
  it('the plan at the start: rows, calls, the limit, the time they need; then a line every minute', async () => {
    const { p, lines, counters, stats, t, at } = setup();
    await p.start();
    expect(lines).toEqual([
      'plan: 1,500 rows to do, 3,000 calls (workflow 3,000 at 500/min), about 6 min at the configured limits; a progress line every minute (no terminal for a bar)',
    ]);
    expect(t.ms).toBeLessThanOrEqual(60_000);
    expect(PROGRESS_LINE_MS).toBe(60_000);

    // A minute in: 249 rows done (498 calls at the limit, the first at 0 ms), 2 of them failed.
    counters.firstDispatch = 1;
    for (let i = 0; i < 498; i += 1) stats.workflow.recordAttempt(1 + i * 120, 30, 200);
    counters.succeeded = 247;
    counters.failed = 2;
    at(60_001);
    t.fire();
    expect(lines[1]).toBe(
      'progress: 249 of 1,500 rows done (16%), 2 in errors this session; workflow 500/min of 500/min; 0 retries, 0 x 429; ETA 5m01s',
    );
    p.stop();
    expect(t.stopped).toBe(true);
  });

  it('a resume: the rows done before are not to do, and count as done', async () => {
    const { p, lines, counters, t, at } = setup({ doneBefore: 1000 });
    await p.start();
    expect(lines[0]).toMatch(
      /^plan: 500 rows to do \(1,000 done before\), 1,000 calls \(workflow 1,000 at 500\/min\), about 2 min /,
    );
    counters.firstDispatch = 1;
    at(60_001);
    t.fire();
    expect(lines[1]).toMatch(
      /^progress: 1,000 of 1,500 rows done \(66%\), 0 in errors this session; starting; .*; ETA not known yet$/,
    );
  });

  it('rows not known ahead (stdin): the limits, and the rows done without a total', async () => {
    const { p, lines, counters, t } = setup({ unknown: true });
    await p.start();
    expect(lines[0]).toBe(
      'plan: rows not known ahead (stdin); limits workflow 500/min; a progress line every minute (no terminal for a bar)',
    );
    counters.succeeded = 7;
    t.fire();
    expect(lines[1]).toBe('progress: 7 rows done, 0 in errors this session; starting; 0 retries, 0 x 429');
  });

  it('a run that ends before its rows are counted says nothing and starts no timer', async () => {
    let counted: (n: number) => void = () => undefined;
    const lines: string[] = [];
    const { t, ticker } = handTicker();
    const p = new ProgressLines({
      s: { pipeline: loadPipeline('location'), rates: DEFAULT_RATES, limit: undefined, shard: undefined },
      log: (line) => void lines.push(line),
      client: { stats: perService(() => new CallStats()) },
      counters: newCounters(),
      estimate: () => new Promise<number>((resolve) => (counted = resolve)),
      doneBefore: 0,
      ticker,
    });
    const started = p.start();
    p.stop();
    counted(12);
    await started;
    expect(lines).toEqual([]);
    expect(t.ms).toBe(0);
  });
});
