/**
 * The pusher's rules, with the request replaced: a push never makes its caller wait, at most one is in flight
 * and the pushes asked for meanwhile become one more (never a queue), the end waits for the pushes asked for
 * and no longer than its bound, a failure is said once. The gateway itself is in test/e2e/pushgateway.test.ts.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { groupingPath, groupPath, MetricsPusher, parsePushgatewayUrl } from '../../src/metrics/pushgateway.js';

function controlled() {
  const calls: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const send = () => new Promise<void>((resolve, reject) => calls.push({ resolve, reject }));
  return { calls, send };
}
const flush = () => new Promise((r) => setImmediate(r));

describe('MetricsPusher', () => {
  it('pushes beside the caller; what is asked while one is in flight becomes one more push', async () => {
    const { calls, send } = controlled();
    const warnings: string[] = [];
    const p = new MetricsPusher(new Registry(), {
      url: new URL('http://gw:9091'),
      groupings: {},
      warn: (m) => warnings.push(m),
      send,
    });
    p.push();
    expect(calls).toHaveLength(1);
    for (let i = 0; i < 5; i += 1) p.push();
    expect(calls).toHaveLength(1);
    calls[0].resolve();
    await flush();
    expect(calls).toHaveLength(2);
    calls[1].reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await flush();
    p.push();
    calls[2].reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await flush();
    expect(calls).toHaveLength(3);
    expect(warnings).toEqual([
      'warning: cannot push metrics to the Pushgateway at http://gw:9091/: ECONNREFUSED; the run goes on (said once)',
    ]);
    expect(p.counts).toEqual({ pushes: 3, failures: 2 });
  });

  it('the end waits for the pushes asked for, the final one included, and says whether it arrived', async () => {
    const { calls, send } = controlled();
    const p = new MetricsPusher(new Registry(), {
      url: new URL('http://gw:9091'),
      groupings: {},
      warn: () => undefined,
      send,
      endWaitMs: 60_000,
    });
    p.push();
    p.push(); // the final state, asked while the first is in flight
    const end = p.finish();
    calls[0].resolve();
    await flush();
    expect(calls).toHaveLength(2);
    calls[1].resolve();
    await expect(end).resolves.toBe(true);
    // Nothing new asked: a second end sends nothing.
    await expect(p.finish()).resolves.toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('the end gives up on a gateway that never answers after its bound, and says so', async () => {
    const { calls, send } = controlled();
    const warnings: string[] = [];
    const p = new MetricsPusher(new Registry(), {
      url: new URL('http://gw:9091/base'),
      groupings: {},
      warn: (m) => warnings.push(m),
      send,
      endWaitMs: 20,
    });
    p.push();
    await expect(p.finish()).resolves.toBe(false);
    expect(calls).toHaveLength(1);
    expect(warnings).toEqual([
      "warning: the last push to the Pushgateway at http://gw:9091/base did not finish in time; the run's end did not wait for it",
    ]);
  });
});

describe('--pushgateway URL', () => {
  it('takes an http(s) base URL and refuses credentials, other schemes and queries', () => {
    expect(parsePushgatewayUrl('http://pushgateway.monitoring:9091').host).toBe('pushgateway.monitoring:9091');
    expect(() => parsePushgatewayUrl('pushgateway:9091')).toThrow(
      "Expected --pushgateway to be an http:// or https:// URL, got 'pushgateway:'",
    );
    expect(() => parsePushgatewayUrl('not a url')).toThrow(
      "Expected --pushgateway to be a URL such as http://pushgateway:9091, got 'not a url'",
    );
    expect(() => parsePushgatewayUrl('https://u:pw@gw')).toThrow(/without a user or password/);
    expect(() => parsePushgatewayUrl('https://gw/?x=1')).toThrow(/query or fragment/);
  });

  it('grouping values with a slash or empty go base64url-encoded, as the gateway reads them', () => {
    expect(groupingPath({ pipeline: 'rescore', shard: '1/2', env: '' })).toEqual({
      pipeline: 'rescore',
      'shard@base64': 'MS8y',
      'env@base64': '=',
    });
    expect(groupPath({ pipeline: 'rescore', shard: '1/2' })).toBe(
      '/metrics/job/bre_batch/pipeline/rescore/shard%40base64/MS8y',
    );
  });
});
