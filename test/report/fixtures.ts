/**
 * An output folder as a run resumed three times leaves it: manifest, summary (stopped in the last session),
 * a time series of four sessions with pauses of 20 minutes, 3 hours and a day, errors whose text tries to
 * inject HTML. Built through the real time-series writer with an injected clock.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Histogram } from '../../src/metrics/histogram.js';
import { RunMonitor } from '../../src/pipeline/monitor.js';
import type { RunProbe } from '../../src/metrics/sampler.js';

export const INJECTED = '<img src=x onerror=alert(1)>';

/**
 * `dir` is an empty folder to fill; `text` the input's path and the odd decision and error text, by default the
 * HTML injection the report must escape (the guide's picture, scripts/docs/pictures.ts, gives plain ones).
 */
export async function resumedRunFolder(
  dir: string,
  text: { readonly input: string; readonly odd: string } = { input: `/data/in/${INJECTED}.csv`, odd: INJECTED },
): Promise<string> {
  mkdirSync(join(dir, '.state'));
  let t = Date.UTC(2026, 10, 20, 22, 0, 0);
  const now = () => t;
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let done = 0;
  const pauses = [20 * 60_000, 3 * 3600_000, 24 * 3600_000];
  for (let session = 0; session < 4; session += 1) {
    const c = {
      read: 0,
      succeeded: 0,
      failed: 0,
      ran: 0,
      skipped: 0,
      bureauRan: 0,
      w: { calls: 0, retries: 0, throttled: 0, waitMs: 0 },
      b: { calls: 0, retries: 0, throttled: 0, waitMs: 0 },
    };
    let lw = new Histogram();
    let lb = new Histogram();
    const probe: RunProbe = {
      rows: () => ({ read: c.read, succeeded: c.succeeded, failed: c.failed }),
      progress: () => ({ done: done + c.succeeded + c.failed, total: 12_000 }),
      stages: () => ({
        bureau: { ran: c.bureauRan, skipped: 0, failed: 0 },
        decision: { ran: c.ran, skipped: c.skipped, failed: c.failed },
      }),
      series: () => [
        {
          labels: { service: 'bureau' },
          ...c.b,
          limitPerMin: 1000,
          takeLatency: () => {
            const h = lb;
            lb = new Histogram();
            return h;
          },
        },
        {
          labels: { service: 'workflow' },
          ...c.w,
          limitPerMin: 500,
          takeLatency: () => {
            const h = lw;
            lw = new Histogram();
            return h;
          },
        },
      ],
    };
    const m = await RunMonitor.start(probe, {
      dir,
      limits: { workflow: 500, bureau: 1000 },
      now,
      intervalMs: 3_600_000,
    });
    const minutes = [8, 5, 6, 4][session];
    for (let tick = 0; tick < minutes * 12; tick += 1) {
      t += 5_000;
      const rows = 38 + Math.floor(rnd() * 6);
      const failed = rnd() < 0.2 ? 1 : 0;
      const skipped = rnd() < 0.3 ? 2 : 0;
      c.read += rows;
      c.succeeded += rows - failed;
      c.failed += failed;
      c.ran += rows - failed - skipped;
      c.skipped += skipped;
      c.bureauRan += rows;
      const retries = rnd() < 0.1 ? 2 : 0;
      const throttled = session === 2 && tick > 20 && tick < 30 ? 1 : 0;
      c.w.calls += rows + retries;
      c.w.retries += retries;
      c.w.throttled += throttled;
      c.w.waitMs += 4000;
      c.b.calls += rows;
      for (let i = 0; i < rows; i += 1) {
        lw.record(120 + rnd() * 200 + (rnd() < 0.02 ? 1500 : 0));
        lb.record(40 + rnd() * 60);
      }
      await m.tick();
    }
    // The session's closing sample counts the folder's rows as they stand, this session's among them.
    await m.finish('stopped');
    done += c.succeeded + c.failed;
    t += pauses[session] ?? 0;
  }
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      tool: 'bre-batch',
      pipeline: { name: 'rescore', path: '/p/rescore.yaml', sha256: 'x' },
      input: { path: text.input, format: 'csv', size: 1, sha256: 'y' },
      key: 'reference_id',
      shard: null,
      limit: null,
      created_at: '2026-11-20T22:00:00Z',
    }),
  );
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      pipeline: 'rescore',
      input: text.input,
      out: dir,
      dry_run: false,
      finished: false,
      stopped: { code: 'INTERRUPTED', message: 'interrupted by SIGTERM', service: null, status: null },
      shard: null,
      rows: { succeeded: done - 50, failed: 50, read: 1200, resumed: 9000 },
      seconds: 240,
      rows_per_second: 8.1,
      stages: {
        bureau: { kind: 'bureau_features', rows_ran: 1200, rows_skipped: 0, rows_failed: 0 },
        decision: { kind: 'workflow', rows_ran: 1100, rows_skipped: 80, rows_failed: 20 },
      },
      services: {
        workflow: {
          rate_limit: '500/min',
          attempts: 1250,
          retries: 30,
          throttled_429: 9,
          latency_ms: { p50: 210.3, p95: 480.1, p99: 1580 },
          achieved_per_minute: 492.4,
        },
        bureau: {
          rate_limit: '1000/min',
          attempts: 1200,
          retries: 0,
          throttled_429: 0,
          latency_ms: { p50: 70.2, p95: 98.1, p99: 99.9 },
          achieved_per_minute: 480,
        },
      },
      decisions: { decision: { Approve: 7000, Reject: 2500, '(skipped)': 600, [text.odd]: 3 } },
      remaining: { rows_estimate: 12_000 - done, time_estimate: '4 min', time_estimate_ms: 240_000 },
    }),
  );
  const errors = [
    {
      row: 12,
      line: 13,
      key: 'K12',
      stage: 'decision',
      status: 422,
      code: 'VALIDATION_FAILED',
      message: `pan_number: Expected a PAN, got ******234F ${text.odd}`,
      field: 'pan_number',
      expected: 'a PAN',
      attempts: 1,
      input: {},
    },
    {
      row: 40,
      line: 41,
      key: 'K40',
      stage: 'decision',
      status: 503,
      code: 'SERVER_UNAVAILABLE',
      message: 'workflow answered 503 after 6 attempts',
      attempts: 6,
      input: {},
    },
    ...Array.from({ length: 48 }, (_, i) => ({
      row: 100 + i,
      line: 101 + i,
      key: `K${100 + i}`,
      stage: null,
      status: null,
      code: 'INVALID_ROW',
      message: `declared_income: Expected a number, got 'abc${i}'`,
      field: 'declared_income',
      expected: 'a number',
      attempts: 0,
      input: {},
    })),
  ];
  writeFileSync(join(dir, 'errors.ndjson'), errors.map((e) => `${JSON.stringify(e)}\n`).join(''));
  writeFileSync(join(dir, 'results.ndjson'), '');
  return dir;
}

/**
 * An output folder of a nightly run of several hours: 21:40 to 01:50 UTC, stopped (SIGTERM), resumed at 02:25
 * and finished at 05:10, so the time axis crosses midnight and a pause. The workflow limit is 500 a minute;
 * from 23:30 to 00:10 the service slows down and answers some 429s. Built through the real time-series writer
 * with an injected clock, a sample every 5 s as a run takes them.
 */
/** `dir` is an empty folder to fill. */
export async function nightRunFolder(dir: string): Promise<string> {
  mkdirSync(join(dir, '.state'));
  const start = Date.UTC(2026, 10, 20, 21, 40, 0);
  let t = start;
  const now = () => t;
  let seed = 11;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sessions = [
    { minutes: 250, pauseAfter: 35 * 60_000 },
    { minutes: 165, pauseAfter: 0 },
  ];
  /** Rows in the 5 s ending at `at`: fewer while the service is slow (23:30 to 00:10). */
  const rowsAt = (at: number) => {
    const hour = new Date(at).getUTCHours() + new Date(at).getUTCMinutes() / 60;
    return hour >= 23.5 || hour < 1 / 6 ? 33 : 41;
  };
  // The input's rows: exactly what the two sessions do, so the ETA runs out as the run does.
  let total = 0;
  let at = start;
  for (const plan of sessions) {
    for (let tick = 0; tick < plan.minutes * 12; tick += 1) {
      at += 5_000;
      total += rowsAt(at);
    }
    at += plan.pauseAfter;
  }
  let done = 0;
  let failedAll = 0;
  let last = { read: 0, failed: 0, calls: 0, retries: 0, throttled: 0 };
  for (const [session, plan] of sessions.entries()) {
    const c = {
      read: 0,
      succeeded: 0,
      failed: 0,
      ran: 0,
      w: { calls: 0, retries: 0, throttled: 0, waitMs: 0 },
      b: { calls: 0, retries: 0, throttled: 0, waitMs: 0 },
    };
    let lw = new Histogram();
    let lb = new Histogram();
    const probe: RunProbe = {
      rows: () => ({ read: c.read, succeeded: c.succeeded, failed: c.failed }),
      progress: () => ({ done: done + c.succeeded + c.failed, total }),
      stages: () => ({
        bureau: { ran: c.read, skipped: 0, failed: 0 },
        decision: { ran: c.ran, skipped: 0, failed: c.failed },
      }),
      series: () => [
        {
          labels: { service: 'bureau' },
          ...c.b,
          limitPerMin: 1000,
          takeLatency: () => {
            const h = lb;
            lb = new Histogram();
            return h;
          },
        },
        {
          labels: { service: 'workflow' },
          ...c.w,
          limitPerMin: 500,
          takeLatency: () => {
            const h = lw;
            lw = new Histogram();
            return h;
          },
        },
      ],
    };
    const m = await RunMonitor.start(probe, {
      dir,
      limits: { workflow: 500, bureau: 1000 },
      now,
      intervalMs: 3_600_000,
    });
    for (let tick = 0; tick < plan.minutes * 12; tick += 1) {
      t += 5_000;
      const rows = rowsAt(t);
      const slow = rows < 41;
      const failed = rnd() < 0.05 ? 1 : 0;
      const throttled = slow && rnd() < 0.3 ? 1 : 0;
      const retries = throttled + (rnd() < 0.05 ? 1 : 0);
      c.read += rows;
      c.succeeded += rows - failed;
      c.failed += failed;
      c.ran += rows - failed;
      c.w.calls += rows + retries;
      c.w.retries += retries;
      c.w.throttled += throttled;
      c.w.waitMs += 4000;
      c.b.calls += rows;
      for (let i = 0; i < rows; i += 1) {
        lw.record((slow ? 600 : 180) + rnd() * 150 + (rnd() < 0.02 ? 1200 : 0));
        lb.record(45 + rnd() * 50);
      }
      await m.tick();
    }
    await m.finish(session === sessions.length - 1 ? 'finished' : 'stopped');
    done += c.succeeded + c.failed;
    failedAll += c.failed;
    last = { read: c.read, failed: c.failed, calls: c.w.calls, retries: c.w.retries, throttled: c.w.throttled };
    t += plan.pauseAfter;
  }
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      version: 1,
      tool: 'bre-batch',
      pipeline: { name: 'rescore', path: '/p/rescore.yaml', sha256: 'x' },
      input: { path: '/data/in/nightly.csv', format: 'csv', size: 1, sha256: 'y' },
      key: 'reference_id',
      shard: null,
      limit: null,
      created_at: new Date(start).toISOString(),
    }),
  );
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      pipeline: 'rescore',
      input: '/data/in/nightly.csv',
      out: dir,
      dry_run: false,
      finished: true,
      stopped: null,
      shard: null,
      rows: { succeeded: done - failedAll, failed: failedAll, read: last.read, resumed: done - last.read },
      seconds: 165 * 60,
      rows_per_second: 8.2,
      stages: {
        bureau: { kind: 'bureau_features', rows_ran: last.read, rows_skipped: 0, rows_failed: 0 },
        decision: { kind: 'workflow', rows_ran: last.read - last.failed, rows_skipped: 0, rows_failed: last.failed },
      },
      services: {
        workflow: {
          rate_limit: '500/min',
          attempts: last.calls,
          retries: last.retries,
          throttled_429: last.throttled,
          latency_ms: { p50: 231.4, p95: 362.9, p99: 1402.2 },
          achieved_per_minute: 494.5,
        },
        bureau: {
          rate_limit: '1000/min',
          attempts: last.read,
          retries: 0,
          throttled_429: 0,
          latency_ms: { p50: 70.2, p95: 93.8, p99: 94.9 },
          achieved_per_minute: 492,
        },
      },
      decisions: { decision: { Approve: Math.round(done * 0.55), Reject: done - failedAll - Math.round(done * 0.55) } },
    }),
  );
  writeFileSync(
    join(dir, 'errors.ndjson'),
    Array.from(
      { length: 30 },
      (_, i) =>
        `${JSON.stringify({ row: 500 + i, line: 501 + i, key: `K${500 + i}`, stage: 'decision', status: 503, code: 'SERVER_UNAVAILABLE', message: 'workflow answered 503 after 6 attempts', attempts: 6, input: {} })}\n`,
    ).join(''),
  );
  writeFileSync(join(dir, 'results.ndjson'), '');
  return dir;
}
