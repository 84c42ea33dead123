/**
 * A run that throws between its setup and its end gives back what it held: the output folder's lock, the
 * SIGINT/SIGTERM handlers and every limiter. Runs in-process against the sandbox, with limiter factories
 * that fail where a real one could (Redis refusing a limiter, a limiter failing to stop).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import { localLimiter, type LimiterFactory } from '../../src/limits/factory.js';
import type { ServiceLimiter } from '../../src/limits/limiter.js';
import { lockOutput } from '../../src/output/lock.js';
import { runPipeline } from '../../src/pipeline/runner.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import type { ServiceName } from '@bre-batch/core/types';
import { locationSettings } from '../helpers/run-settings.js';
import { tempDir } from '../helpers/temp.js';
import { folderRoot } from '../../src/input/files-root.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rate: { workflow: null, bureau: null, account: null } });
});
afterAll(async () => {
  await sandbox.close();
});

function settings(outDir: string): RunSettings {
  return locationSettings(sandbox, resolve(import.meta.dirname, '../../samples/location.csv'), outDir, {
    filesRoot: folderRoot(resolve(import.meta.dirname, '../../samples'), false),
    outputFormats: new Set(['csv', 'parquet']),
  });
}

/** Local limiters, recorded, with `fail` deciding where one of them throws. */
function recordingFactory(fail: { create?: ServiceName; stop?: ServiceName }): {
  factory: LimiterFactory;
  stopped: ServiceName[];
} {
  const stopped: ServiceName[] = [];
  const factory: LimiterFactory = async (r) => {
    if (r.service === fail.create) throw new BreError('CONFIG_INVALID', `no ${r.service} limiter today`);
    const inner = await localLimiter(r);
    const wrapped: ServiceLimiter = {
      service: inner.service,
      get pausedUntil() {
        return inner.pausedUntil;
      },
      get throttledSince() {
        return inner.throttledSince;
      },
      onAnswered: () => inner.onAnswered(),
      schedule: (fn, retry) => inner.schedule(fn, retry),
      onThrottled: (seconds) => inner.onThrottled(seconds),
      onSuccess: () => inner.onSuccess(),
      nextStartInMs: () => inner.nextStartInMs(),
      stats: () => inner.stats(),
      stop: async () => {
        stopped.push(r.service);
        await inner.stop();
        if (r.service === fail.stop) throw new Error(`the ${r.service} limiter failed to stop`);
      },
    };
    return wrapped;
  };
  return { factory, stopped };
}

const signalHandlers = () => process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');

/** The lock is free when this process can take it again (and a lock file is left by nobody). */
function lockIsFree(dir: string): boolean {
  if (existsSync(join(dir, '.state', 'lock'))) return false;
  lockOutput(dir)();
  return true;
}

describe('a run that throws after its setup', () => {
  it('a limiter that fails to stop: the error surfaces; the lock, the handlers and every other limiter are given back', async () => {
    const out = tempDir('bre-teardown-');
    const before = signalHandlers();
    const { factory, stopped } = recordingFactory({ stop: 'workflow' });
    await expect(runPipeline(settings(out), { limiterFactory: factory })).rejects.toThrow(
      /the workflow limiter failed to stop/,
    );
    expect(signalHandlers()).toBe(before);
    expect(stopped.sort()).toEqual(['account', 'bureau', 'workflow']);
    expect(lockIsFree(out)).toBe(true);
  });

  it('a limiter that cannot be made (after the folder is locked): the lock is released and the limiters made are stopped', async () => {
    const out = tempDir('bre-teardown-');
    const before = signalHandlers();
    const { factory, stopped } = recordingFactory({ create: 'account' });
    await expect(runPipeline(settings(out), { limiterFactory: factory })).rejects.toThrow(/no account limiter today/);
    expect(existsSync(join(out, 'manifest.json'))).toBe(true);
    expect(signalHandlers()).toBe(before);
    expect(stopped.sort()).toEqual(['bureau', 'workflow']);
    expect(lockIsFree(out)).toBe(true);
  });

  it('an opening that fails half-way (the time series cannot be opened) gives back what it held; a later failure of the closing is logged, the first is thrown', async () => {
    const out = tempDir('bre-teardown-');
    // The time series' file is a folder: the monitor, opened after the folder and the limiters, cannot start.
    mkdirSync(join(out, '.state', 'timeline.ndjson'), { recursive: true });
    const before = signalHandlers();
    const { factory, stopped } = recordingFactory({ stop: 'workflow' });
    const logged: string[] = [];
    const s = { ...settings(out), log: (line: string) => void logged.push(line) };
    await expect(runPipeline(s, { limiterFactory: factory })).rejects.toThrow(/EISDIR/);
    expect(stopped.sort()).toEqual(['account', 'bureau', 'workflow']);
    expect(logged.filter((l) => l.startsWith('warning: while closing the run'))).toEqual([
      'warning: while closing the run (egress): the workflow limiter failed to stop',
    ]);
    expect(signalHandlers()).toBe(before);
    expect(lockIsFree(out)).toBe(true);
  });

  it('the same run without a failure finishes and also leaves nothing behind', async () => {
    const out = tempDir('bre-teardown-');
    const before = signalHandlers();
    const { factory, stopped } = recordingFactory({});
    const result = await runPipeline(settings(out), { limiterFactory: factory });
    expect(result.exitCode).toBe(0);
    expect(result.summary.rows.succeeded).toBeGreaterThan(0);
    expect(signalHandlers()).toBe(before);
    expect(stopped.sort()).toEqual(['account', 'bureau', 'workflow']);
    expect(lockIsFree(out)).toBe(true);
  });
});
