/**
 * The time series survives resumes: a run resumed three times (one session killed without its end line,
 * its last line torn) reads back as one timeline of four sessions whose samples add up to the counters.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Histogram } from '../../src/metrics/histogram.js';
import { RunMonitor } from '../../src/pipeline/monitor.js';
import type { RunProbe } from '../../src/metrics/sampler.js';
import { FILES } from '@bre-batch/formats';
import { readTimeline } from '../../src/output/timeline-store.js';
import { tempDir } from '../helpers/temp.js';

/** Live counters the test moves by hand, as the runner's would move. */
function fakeRun() {
  const c = { read: 0, succeeded: 0, failed: 0, calls: 0, retries: 0, throttled: 0, waitMs: 0, ran: 0 };
  let recent = new Histogram();
  const probe: RunProbe = {
    rows: () => ({ read: c.read, succeeded: c.succeeded, failed: c.failed }),
    progress: () => ({ done: c.succeeded + c.failed, total: 1000 }),
    stages: () => ({ bre: { ran: c.ran, skipped: 0, failed: c.failed } }),
    series: () => [
      {
        labels: { service: 'workflow' },
        calls: c.calls,
        retries: c.retries,
        throttled: c.throttled,
        waitMs: c.waitMs,
        limitPerMin: 500,
        takeLatency: () => {
          const h = recent;
          recent = new Histogram();
          return h;
        },
      },
    ],
  };
  const step = (rows: number, ms: number) => {
    c.read += rows;
    c.succeeded += rows;
    c.ran += rows;
    c.calls += rows + 1;
    c.retries += 1;
    c.throttled += 1;
    c.waitMs += 100;
    for (let i = 0; i < rows; i += 1) recent.record(ms);
  };
  return { probe, step };
}

describe('.state/timeline.ndjson', () => {
  it('one continuous timeline over sessions, with where each began and ended', async () => {
    const dir = tempDir('bre-tl-');
    mkdirSync(join(dir, '.state'));
    let t = 1_000_000;
    const now = () => t;
    const sessions = [
      { rows: [10, 20], ms: 50, end: 'stopped' as const },
      { rows: [30], ms: 80, end: undefined }, // killed: no end line, and a torn last line
      { rows: [5, 5, 5], ms: 20, end: 'stopped' as const },
      { rows: [40], ms: 30, end: 'finished' as const },
    ];
    for (const [i, s] of sessions.entries()) {
      const run = fakeRun();
      const m = await RunMonitor.start(run.probe, { dir, limits: { workflow: 500 }, now, intervalMs: 3_600_000 });
      for (const rows of s.rows) {
        t += 5_000;
        run.step(rows, s.ms);
        await m.tick();
      }
      if (s.end) await m.finish(s.end);
      else {
        await m.finish('failed'); // closes the file; a killed process writes no end line either
        appendFileSync(join(dir, FILES.timeline), '{"kind":"sample","session":2,"t":');
      }
      t += 60_000 * (i + 1); // the gap before the next session
    }
    const tl = (await readTimeline(dir))!;
    expect(tl.sessions.map((s) => s.session)).toEqual([1, 2, 3, 4]);
    expect(tl.ends.map((e) => [e.session, e.state])).toEqual([
      [1, 'stopped'],
      [3, 'stopped'],
      [4, 'finished'],
    ]);
    // The samples add up to what each session did.
    const rows = tl.samples.reduce((n, s) => n + s.rows.succeeded, 0);
    expect(rows).toBe(10 + 20 + 30 + 15 + 40);
    const calls = tl.samples.reduce((n, s) => n + s.series[0].calls, 0);
    expect(calls).toBe(rows + 7);
    expect(tl.samples.filter((s) => s.session === 2).map((s) => s.series[0].p95)).toEqual([
      expect.closeTo(80, 0),
      null,
    ]);
    // Times only go forward, across sessions too.
    const times = tl.samples.map((s) => s.t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(tl.samples.every((s) => s.stages.bre.ran >= 0 && s.series[0].limit_per_min === 500)).toBe(true);
  });

  it('a folder written by an older build has no timeline', async () => {
    expect(await readTimeline(tempDir('bre-tl-'))).toBeUndefined();
  });
});
