/**
 * The monitor on a full disk (issue 24): the time series is part of the output folder, and the metrics file
 * may sit on a disk of its own; when either disk is full the run is stopped with DISK_FULL naming that folder
 * (the timer's callback never throws). Other failures of the metrics file stay a warning. The disk is a
 * switch on node:fs's writes (the e2e tests fill a real tmpfs, test/e2e/disk-full.test.ts).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BreError } from '@bre-batch/core/errors';
import type { RunProbe } from '../../src/metrics/sampler.js';
import { Histogram } from '../../src/metrics/histogram.js';
import { tempDir } from '../helpers/temp.js';

/** Folders whose writes fail, and how. */
const disk = vi.hoisted(() => ({ full: new Map<string, string>() }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fdPaths = new Map<number, string>();
  const failure = (path: string | undefined) => {
    for (const [dir, code] of disk.full)
      if (path?.startsWith(dir))
        return Object.assign(new Error(`${code}: failed, write`), { code, syscall: 'write', path });
    return undefined;
  };
  const openSync = (path: string, ...rest: unknown[]) => {
    const fd = (fs.openSync as (...a: unknown[]) => number)(path, ...rest);
    fdPaths.set(fd, String(path));
    return fd;
  };
  const writeSync = (fd: number, ...rest: unknown[]) => {
    const err = failure(fdPaths.get(fd));
    if (err) throw err;
    return (fs.writeSync as (...a: unknown[]) => number)(fd, ...rest);
  };
  const writeFileSync = (path: string, ...rest: unknown[]) => {
    const err = failure(String(path));
    if (err) throw err;
    return (fs.writeFileSync as (...a: unknown[]) => void)(path, ...rest);
  };
  const wrapped = { ...fs, openSync, writeSync, writeFileSync };
  return { ...wrapped, default: wrapped };
});

const { RunMonitor } = await import('../../src/pipeline/monitor.js');
const { RunMetrics } = await import('../../src/metrics/prometheus.js');

const probe: RunProbe = {
  rows: () => ({ read: 1, succeeded: 1, failed: 0 }),
  progress: () => ({ done: 1, total: 10 }),
  stages: () => ({ bre: { ran: 1, skipped: 0, failed: 0 } }),
  series: () => [
    {
      labels: { service: 'workflow' },
      calls: 1,
      retries: 0,
      throttled: 0,
      waitMs: 0,
      limitPerMin: 500,
      takeLatency: () => new Histogram(),
    },
  ],
};

afterEach(() => disk.full.clear());

async function start(o: { metricsDir?: string } = {}) {
  const dir = tempDir('bre-mon-');
  mkdirSync(join(dir, '.state'));
  const stops: BreError[] = [];
  const warnings: string[] = [];
  const metrics = o.metricsDir
    ? await RunMetrics.start({ file: join(o.metricsDir, 'bre.prom'), pipeline: 'p', shard: '' })
    : undefined;
  const m = await RunMonitor.start(probe, {
    dir,
    metrics,
    limits: { workflow: 500 },
    intervalMs: 3_600_000,
    stop: (why) => stops.push(why),
    warn: (w) => warnings.push(w),
  });
  return { dir, m, stops, warnings };
}

describe('the monitor on a full disk', () => {
  it('the time series cannot be written: the run is stopped with DISK_FULL naming the output folder; tick never throws', async () => {
    const { dir, m, stops } = await start();
    disk.full.set(dir, 'ENOSPC');
    await m.tick();
    await new Promise((r) => setImmediate(r));
    await expect(m.tick()).resolves.toBeUndefined();
    expect(stops.length).toBeGreaterThan(0);
    expect(stops.every((s) => s.code === 'DISK_FULL')).toBe(true);
    expect(stops[0].message).toContain(`cannot write to the output folder ${dir} (ENOSPC`);
    // and its end says so too (the run then exits 3)
    await expect(m.finish('stopped')).rejects.toMatchObject({ code: 'DISK_FULL' });
  });

  it("the metrics file's disk is full: DISK_FULL naming the metrics file's folder", async () => {
    const metricsDir = tempDir('bre-prom-');
    const { m, stops, warnings } = await start({ metricsDir });
    disk.full.set(metricsDir, 'EDQUOT');
    await m.tick();
    expect(stops.map((s) => s.code)).toEqual(['DISK_FULL']);
    expect(stops[0].message).toContain(
      `cannot write to the metrics file's folder ${metricsDir} (EDQUOT: disk quota exceeded)`,
    );
    expect(warnings).toEqual([]);
    await expect(m.finish('finished')).rejects.toMatchObject({ code: 'DISK_FULL' });
  });

  it('any other failure of the metrics file is a warning, said once; the run goes on', async () => {
    const metricsDir = tempDir('bre-prom-');
    const { m, stops, warnings } = await start({ metricsDir });
    disk.full.set(metricsDir, 'EACCES');
    await m.tick();
    await m.tick();
    expect(stops).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: cannot write the metrics file: EACCES.*; the run goes on$/);
    await m.finish('finished');
  });
});
