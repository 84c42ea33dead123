/**
 * The metrics file as node exporter's textfile collector reads it: parsed with a real exposition-format
 * parser (parse-prometheus-text-format, a port of the Prometheus client's parser), replaced atomically,
 * the last success carried over from the previous run; an unwritable path is a usage error before any call.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { RunMetrics } from '../../src/metrics/prometheus.js';
import type { RunSnapshot } from '../../src/metrics/sampler.js';
import { tempDir } from '../helpers/temp.js';

type Family = {
  name: string;
  type: string;
  help: string;
  metrics: { value: string; labels?: Record<string, string> }[];
};
const parse = (text: string) => new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
const value = (fams: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  fams.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value;

function snapshot(over: Partial<RunSnapshot>): RunSnapshot {
  return {
    t: 0,
    rows: { read: 0, succeeded: 0, failed: 0 },
    done: 0,
    total: 1000,
    rowsPerSecond: 0,
    etaSeconds: null,
    series: [
      {
        labels: { service: 'workflow' },
        calls: 0,
        retries: 0,
        throttled: 0,
        waitMs: 0,
        limitPerMin: 500,
        perMinute: 0,
      },
    ],
    ...over,
  };
}

describe('--metrics-file', () => {
  it('writes a valid exposition every update and at the end, atomically', async () => {
    const dir = tempDir('bre-prom-');
    const file = join(dir, 'bre_batch.prom');
    const m = await RunMetrics.start({ file, pipeline: 'rescore', shard: '' }, 1_000_000);
    let f = parse(readFileSync(file, 'utf8'));
    expect(value(f, 'bre_batch_run_state', { state: 'running' })).toBe('1');
    expect(value(f, 'bre_batch_run_start_timestamp_seconds', { pipeline: 'rescore' })).toBe('1000');

    m.update(
      snapshot({
        rows: { read: 120, succeeded: 100, failed: 10 },
        done: 110,
        etaSeconds: 60,
        series: [
          {
            labels: { service: 'workflow' },
            calls: 130,
            retries: 20,
            throttled: 3,
            waitMs: 4500,
            limitPerMin: 500,
            perMinute: 492.6,
          },
          {
            labels: { service: 'bureau' },
            calls: 110,
            retries: 0,
            throttled: 0,
            waitMs: 0,
            limitPerMin: null,
            perMinute: 300,
          },
        ],
      }),
    );
    m.update(
      snapshot({
        rows: { read: 220, succeeded: 200, failed: 12 },
        done: 212,
        etaSeconds: 30,
        series: [
          {
            labels: { service: 'workflow' },
            calls: 240,
            retries: 25,
            throttled: 4,
            waitMs: 9000,
            limitPerMin: 500,
            perMinute: 495,
          },
          {
            labels: { service: 'bureau' },
            calls: 212,
            retries: 0,
            throttled: 0,
            waitMs: 0,
            limitPerMin: null,
            perMinute: 310,
          },
        ],
      }),
    );
    await m.write(1_060_000);
    f = parse(readFileSync(file, 'utf8'));
    expect(f.get('bre_batch_calls_total')?.type).toBe('COUNTER');
    expect(value(f, 'bre_batch_rows_total', { outcome: 'succeeded' })).toBe('200');
    expect(value(f, 'bre_batch_rows_total', { outcome: 'failed' })).toBe('12');
    expect(value(f, 'bre_batch_calls_total', { service: 'workflow', pipeline: 'rescore', shard: '' })).toBe('240');
    expect(value(f, 'bre_batch_retries_total', { service: 'workflow' })).toBe('25');
    expect(value(f, 'bre_batch_throttled_total', { service: 'workflow' })).toBe('4');
    expect(value(f, 'bre_batch_limiter_wait_seconds_total', { service: 'workflow' })).toBe('9');
    expect(value(f, 'bre_batch_rate_per_minute', { service: 'workflow' })).toBe('495');
    expect(value(f, 'bre_batch_rate_limit_per_minute', { service: 'workflow' })).toBe('500');
    expect(value(f, 'bre_batch_rate_limit_per_minute', { service: 'bureau' })).toBeUndefined();
    expect(value(f, 'bre_batch_rows_done')).toBe('212');
    expect(value(f, 'bre_batch_rows_expected')).toBe('1000');
    expect(value(f, 'bre_batch_eta_seconds')).toBe('30');
    expect(value(f, 'bre_batch_last_update_timestamp_seconds')).toBe('1060');
    expect(value(f, 'bre_batch_last_success_timestamp_seconds')).toBeUndefined();

    m.finish('finished', 1_200_000);
    await m.write(1_200_000);
    await m.close();
    f = parse(readFileSync(file, 'utf8'));
    expect(value(f, 'bre_batch_run_state', { state: 'finished' })).toBe('1');
    expect(value(f, 'bre_batch_run_state', { state: 'running' })).toBe('0');
    expect(value(f, 'bre_batch_last_success_timestamp_seconds')).toBe('1200');
    // Only the .prom file: the temporary one was renamed over it.
    expect(readdirSync(dir)).toEqual(['bre_batch.prom']);

    // The next night's run starts with the last success of this one, and keeps it when it stops.
    const next = await RunMetrics.start({ file, pipeline: 'rescore', shard: '' }, 2_000_000);
    next.finish('stopped', 2_100_000);
    await next.write(2_100_000);
    f = parse(readFileSync(file, 'utf8'));
    expect(value(f, 'bre_batch_run_state', { state: 'stopped' })).toBe('1');
    expect(value(f, 'bre_batch_last_success_timestamp_seconds')).toBe('1200');
  });

  it('several source addresses: one series per service and address, counted apart', async () => {
    const dir = tempDir('bre-prom-');
    const file = join(dir, 'bre_batch.prom');
    const m = await RunMetrics.start({ file, pipeline: 'location', shard: '' }, 1_000_000);
    const series = (a: number, b: number) => [
      {
        labels: { service: 'workflow', address: '127.0.0.2' },
        calls: a,
        retries: 0,
        throttled: 1,
        waitMs: 0,
        limitPerMin: 600,
        perMinute: 590,
      },
      {
        labels: { service: 'workflow', address: '127.0.0.3' },
        calls: b,
        retries: 0,
        throttled: 0,
        waitMs: 0,
        limitPerMin: 600,
        perMinute: 598,
      },
    ];
    m.update(snapshot({ series: series(40, 42) }));
    m.update(snapshot({ series: series(100, 97) }));
    await m.write(1_001_000);
    const f = parse(readFileSync(file, 'utf8'));
    expect(value(f, 'bre_batch_calls_total', { service: 'workflow', address: '127.0.0.2' })).toBe('100');
    expect(value(f, 'bre_batch_calls_total', { service: 'workflow', address: '127.0.0.3' })).toBe('97');
    expect(value(f, 'bre_batch_throttled_total', { address: '127.0.0.2' })).toBe('1');
    expect(value(f, 'bre_batch_rate_limit_per_minute', { address: '127.0.0.3' })).toBe('600');
  });

  it('a path that cannot be written is a usage error naming the fix, before anything runs', async () => {
    const dir = tempDir('bre-prom-');
    await expect(
      RunMetrics.start({ file: join(dir, 'missing', 'x.prom'), pipeline: 'p', shard: '' }),
    ).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/Expected an existing folder/) });
    // A file where the folder should be fails for every user (root ignores directory permissions).
    writeFileSync(join(dir, 'file'), '');
    await expect(
      RunMetrics.start({ file: join(dir, 'file', 'x.prom'), pipeline: 'p', shard: '' }),
    ).rejects.toMatchObject({ code: 'USAGE' });
    await expect(RunMetrics.start({ port: 70000, pipeline: 'p', shard: '' })).rejects.toThrow(
      "Expected --metrics-port to be a port number from 0 to 65535, got '70000'",
    );
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('--metrics-port serves the same exposition on loopback', async () => {
    const m = await RunMetrics.start({ port: 0, pipeline: 'p', shard: '2/3' });
    const res = await fetch(`http://127.0.0.1:${m.port}/metrics`);
    expect(res.status).toBe(200);
    const f = parse(await res.text());
    expect(value(f, 'bre_batch_run_state', { state: 'running', shard: '2/3' })).toBe('1');
    expect((await fetch(`http://127.0.0.1:${m.port}/other`)).status).toBe(404);
    await m.close();
  });
});
