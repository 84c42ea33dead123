/**
 * The egress in-process (src/pipeline/egress.ts), against the sandbox over real loopback addresses, with
 * limiters recorded per address: a row goes to the address whose next start comes soonest, and a 429
 * pauses only the limiter of the address it was answered to.
 */
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localLimiter, type LimiterFactory } from '../../src/limits/factory.js';
import type { ServiceLimiter } from '../../src/limits/limiter.js';
import { runPipeline } from '../../src/pipeline/runner.js';
import type { RunSettings } from '../../src/pipeline/settings.js';
import { startSandbox, type Sandbox } from '@bre-batch/sandbox';
import { locationCsv } from '../helpers/output.js';
import { locationSettings } from '../helpers/run-settings.js';
import { tempDir } from '../helpers/temp.js';

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

function settings(sb: Sandbox, input: string, outDir: string): RunSettings {
  return locationSettings(sb, resolve(input), outDir, { maxAttempts: 6, localAddresses: ADDRESSES });
}

/** Local limiters; per address, the workflow limiter's 429 notices, and `busy` addresses that always say 10 s. */
function recording(busy: readonly string[] = []): { factory: LimiterFactory; throttled: Map<string, number> } {
  const throttled = new Map<string, number>();
  const factory: LimiterFactory = async (r) => {
    const inner = await localLimiter(r);
    if (r.service !== 'workflow') return inner;
    const address = r.address!;
    throttled.set(address, 0);
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
      onThrottled: (seconds) => {
        throttled.set(address, throttled.get(address)! + 1);
        inner.onThrottled(seconds);
      },
      onSuccess: () => inner.onSuccess(),
      nextStartInMs: () => (busy.includes(address) ? 10_000 : inner.nextStartInMs()),
      stats: () => inner.stats(),
      stop: () => inner.stop(),
    };
    return wrapped;
  };
  return { factory, throttled };
}

describe('the egress of a run with several source addresses', () => {
  let sb: Sandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it('a row goes to the address whose next start comes soonest: one that always says 10 s gets none', async () => {
    sb = await startSandbox({ rate: { workflow: null } });
    const dir = tempDir('bre-egress-route-');
    const { factory } = recording(['127.0.0.3']);
    const result = await runPipeline(settings(sb, locationCsv(dir, 40), join(dir, 'out')), { limiterFactory: factory });
    expect(result.exitCode).toBe(0);
    const a = result.summary.addresses!;
    expect(a['127.0.0.3'].rows).toBe(0);
    expect(a['127.0.0.2'].rows + a['127.0.0.4'].rows).toBe(40);
    expect(a['127.0.0.2'].rows).toBeGreaterThan(0);
    expect(a['127.0.0.4'].rows).toBeGreaterThan(0);
    expect(Object.keys(sb.stats().services.workflow.callers).sort()).toEqual(['127.0.0.2', '127.0.0.4']);
  });

  it('a 429 pauses only the limiter of the address it was answered to', async () => {
    sb = await startSandbox({ rate: { workflow: null }, faults: { 429: 0.15 }, seed: 7 });
    const dir = tempDir('bre-egress-429-');
    const { factory, throttled } = recording();
    const result = await runPipeline(settings(sb, locationCsv(dir, 60), join(dir, 'out')), { limiterFactory: factory });
    expect(result.exitCode).toBe(0);
    const a = result.summary.addresses!;
    let total = 0;
    for (const address of ADDRESSES) {
      // Each limiter heard exactly the 429s its own address was answered, and the sandbox agrees.
      expect(throttled.get(address)).toBe(a[address].throttled_429);
      total += a[address].throttled_429;
    }
    expect(total).toBe(sb.stats().services.workflow.faults['429']);
    expect(total).toBeGreaterThan(0);
  });
});
