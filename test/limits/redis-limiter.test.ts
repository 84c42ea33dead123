import { randomUUID } from 'node:crypto';
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { BreError } from '@bre-batch/core/errors';
import type { Rate } from '@bre-batch/core/rates';
import {
  clusterMinTime,
  jobExpirationMs,
  limiterId,
  REDIS_MARGIN,
  redisLimiterFactory,
  type RedisLimiter,
} from '../../src/limits/redis.js';
import { openRedis, redactRedisUrl, stripErrPrefix } from '../../src/limits/redis-connection.js';
import type { LimiterRequest } from '../../src/limits/factory.js';
import { itRedis, OwnRedis, REDIS_OUTAGE_MS, REDIS_URL, sparePort } from '../helpers/redis.js';
import { sleep, waitFor } from '../helpers/wait.js';

/**
 * The client id of this test file's limiters, unique per run: the limiter ids (and Redis keys) derive from it,
 * so test runs from several checkouts sharing one Redis never meet (each test adds its own suffix too).
 */
const CLIENT_ID = `client-under-test-${randomUUID()}`;

/** What a run of a one-stage workflow pipeline asks of the workflow limiter. */
function settings(rate: Rate | null, extra: Partial<Omit<LimiterRequest, 'rate'>> = {}): LimiterRequest {
  return {
    service: 'workflow',
    rate,
    used: true,
    concurrency: 8,
    timeoutMs: 2000,
    clientId: CLIENT_ID,
    log: () => undefined,
    ...extra,
  };
}

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('pure parts', () => {
  it.each([
    ['ERR SETTINGS_KEY_NOT_FOUND', 'SETTINGS_KEY_NOT_FOUND'],
    ['ERR UNKNOWN_CLIENT', 'UNKNOWN_CLIENT'],
    ['ERR OVERWEIGHT:5:2', 'OVERWEIGHT:5:2'],
    ['SETTINGS_KEY_NOT_FOUND', 'SETTINGS_KEY_NOT_FOUND'],
    ['ERR wrong number of arguments', 'ERR wrong number of arguments'],
    ['ERR UNKNOWN_CLIENT_X', 'ERR UNKNOWN_CLIENT_X'],
  ])('stripErrPrefix(%j) = %j', (input, out) => expect(stripErrPrefix(input)).toBe(out));

  it('limiter ids derive from service and a hash of the client id, never the id itself', () => {
    const id = limiterId('workflow', 'secret-client');
    expect(id).toMatch(/^bre-batch:workflow:[0-9a-f]{16}$/);
    expect(id).not.toContain('secret-client');
    expect(limiterId('workflow', 'secret-client')).toBe(id);
    expect(limiterId('bureau', 'secret-client')).not.toBe(id);
    expect(limiterId('workflow', 'other')).not.toBe(id);
    expect(limiterId('workflow', 'secret-client', 'ip2')).toBe(`${id}:ip2`);
  });

  it.each([
    // [limit, window ms, spacing ms]: the 50 ms jitter allowance matters for short windows only.
    [20, 1000, 53],
    [10, 1000, 105],
    [500, 60_000, 124],
    [1000, 60_000, 62],
    [100, 5000, 52],
  ])('cluster spacing for %i per %i ms is %i ms', (limit, windowMs, ms) => {
    expect(clusterMinTime({ limit, windowMs })).toBe(ms);
    expect(limit * ms).toBeGreaterThanOrEqual(windowMs * (1 + REDIS_MARGIN));
  });

  it('job expiration outlasts the HTTP time-out plus the longest wait for a reserved slot', () => {
    const rate = { limit: 500, windowMs: 60_000 };
    const exp = jobExpirationMs(60_000, rate, 84);
    expect(exp).toBeGreaterThan(60_000 + 84 * clusterMinTime(rate, REDIS_MARGIN));
    expect(exp).toBeLessThan(90_000);
  });

  it('redacts credentials from Redis URLs', () => {
    expect(redactRedisUrl('redis://user:hunter2@cache.internal:6380/2')).toBe('redis://cache.internal:6380/2');
    expect(redactRedisUrl('redis://:hunter2@h:1')).not.toContain('hunter2');
  });

  it('an unreachable Redis is a configuration error (exit 2), with no password in the message', async () => {
    const port = await sparePort();
    const err = await openRedis(`redis://:hunter2@127.0.0.1:${port}`, { connectTimeoutMs: 1500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BreError);
    expect((err as BreError).code).toBe('CONFIG_INVALID');
    expect((err as BreError).message).toContain(`127.0.0.1:${port}`);
    expect((err as BreError).message).not.toContain('hunter2');
    const bad = await openRedis('http://127.0.0.1:6379').catch((e: unknown) => e);
    expect((bad as BreError).code).toBe('CONFIG_INVALID');
  });
});

describe('shared limiter on Redis', () => {
  itRedis('two processes (two connections) on the same id share minTime: starts are spaced across both', async () => {
    const suffix = randomUUID();
    const rate = { limit: 20, windowMs: 1000 };
    const s = settings(rate);
    const fa = redisLimiterFactory(REDIS_URL, { idSuffix: suffix });
    const fb = redisLimiterFactory(REDIS_URL, { idSuffix: suffix });
    const a = await fa(s);
    const b = await fb(s);
    cleanup.push(
      () => a.stop(),
      () => b.stop(),
    );
    expect((a as RedisLimiter).id).toBe((b as RedisLimiter).id);
    const starts: number[] = [];
    const job = () =>
      a.schedule(async () => {
        starts.push(performance.now());
        await sleep(5);
      });
    const jobB = () =>
      b.schedule(async () => {
        starts.push(performance.now());
        await sleep(5);
      });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? job() : jobB())));
    const elapsed = performance.now() - t0;
    starts.sort((x, y) => x - y);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    const minTime = clusterMinTime(rate);
    // Starts are spaced across both on average (a late timer shortens one gap; the guard bounds it).
    expect(gaps.reduce((a, b) => a + b, 0) / gaps.length).toBeGreaterThanOrEqual(minTime - 2);
    // Not more than `limit` starts in any 1 s window: what a strict sliding window on the server checks.
    for (let i = 0; i + 20 < starts.length; i += 1) expect(starts[i + 20] - starts[i]).toBeGreaterThanOrEqual(1000);
    // Together at the shared rate: 30 starts need 29 x minTime; one unshared limiter each would take half.
    expect(elapsed).toBeGreaterThan(29 * minTime - 10);
  });

  itRedis('a worker that stalls gives up the slots it missed instead of sending them in a burst', async () => {
    const rate = { limit: 20, windowMs: 1000 };
    const l = (await redisLimiterFactory(REDIS_URL, { idSuffix: randomUUID() })(
      settings(rate, { concurrency: 20 }),
    )) as RedisLimiter;
    cleanup.push(() => l.stop());
    const starts: number[] = [];
    const all = Promise.all(
      Array.from({ length: 40 }, () =>
        l.schedule(async () => {
          starts.push(performance.now());
        }),
      ),
    );
    await waitFor(() => starts.length >= 3, 10_000, 'calls to flow');
    // The event loop is blocked for 400 ms: a dozen reserved slots pass meanwhile.
    const until = performance.now() + 400;
    while (performance.now() < until) {
      /* stall */
    }
    await all;
    starts.sort((x, y) => x - y);
    for (let i = 0; i + rate.limit < starts.length; i += 1)
      expect(starts[i + rate.limit] - starts[i]).toBeGreaterThanOrEqual(rate.windowMs);
    expect(l.lateStarts).toBeGreaterThan(0);
  });

  itRedis(
    'a worker whose event loop lags for good still gets its calls out (no livelock on given-up slots)',
    async () => {
      const rate = { limit: 20, windowMs: 1000 };
      const l = (await redisLimiterFactory(REDIS_URL, { idSuffix: randomUUID() })(
        settings(rate, { concurrency: 20 }),
      )) as RedisLimiter;
      cleanup.push(() => l.stop());
      // Busy 80 ms out of every 90: every timer fires up to ~80 ms late, beyond the 30 ms allowed at first.
      const lag = setInterval(() => {
        const until = performance.now() + 80;
        while (performance.now() < until) {
          /* lag */
        }
      }, 10);
      try {
        // A livelock (every slot given up again and again) would never settle: the test's time-out is the guard.
        const done = await Promise.all(Array.from({ length: 30 }, (_, i) => l.schedule(async () => i)));
        expect(done).toEqual(Array.from({ length: 30 }, (_, i) => i));
        expect(l.lateStarts).toBeGreaterThan(0);
      } finally {
        clearInterval(lag);
      }
    },
    40_000,
  );

  itRedis('each job holds its slot in Redis for the job expiration, so a crashed worker frees it', async () => {
    const suffix = randomUUID();
    const s = settings({ limit: 50, windowMs: 1000 }, { timeoutMs: 1234, concurrency: 4 });
    const f = redisLimiterFactory(REDIS_URL, { idSuffix: suffix });
    const l = (await f(s)) as RedisLimiter;
    cleanup.push(() => l.stop());
    const probe = new Redis(REDIS_URL);
    cleanup.push(async () => {
      probe.disconnect();
    });
    const expected = jobExpirationMs(1234, { limit: 50, windowMs: 1000 }, 4);
    let seen: string[] = [];
    await l.schedule(async () => {
      seen = await probe.zrange(`b_${l.id}_job_expirations`, 0, -1, 'WITHSCORES');
    });
    expect(seen.length).toBe(2);
    const [sec, usec] = await probe.time();
    const redisNow = Number(sec) * 1000 + Number(usec) / 1000;
    expect(Number(seen[1]) - redisNow).toBeGreaterThan(expected - 1000);
    expect(Number(seen[1]) - redisNow).toBeLessThanOrEqual(expected + 50);
  });

  itRedis('recovers when its keys vanish (Redis restart, key expiry): the ERR-prefix repair', async () => {
    const suffix = randomUUID();
    const s = settings({ limit: 100, windowMs: 1000 });
    const f = redisLimiterFactory(REDIS_URL, { idSuffix: suffix });
    const l = (await f(s)) as RedisLimiter;
    cleanup.push(() => l.stop());
    expect(await l.schedule(async () => 1)).toBe(1);
    const probe = new Redis(REDIS_URL);
    cleanup.push(async () => {
      probe.disconnect();
    });
    const keys = await probe.keys(`b_${l.id}_*`);
    expect(keys.length).toBeGreaterThan(0);
    await probe.del(...keys);
    // Without the repair every script now fails with `ERR SETTINGS_KEY_NOT_FOUND` and is never re-initialised.
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => l.schedule(async () => i)));
    expect(results).toEqual([0, 1, 2, 3, 4]);
    expect(l.rescheduled).toBe(0);
    expect(await probe.exists(`b_${l.id}_settings`)).toBe(1);
    // And its client registration alone vanishing (UNKNOWN_CLIENT) is repaired too.
    await probe.del(`b_${l.id}_client_last_seen`);
    expect(await l.schedule(async () => 'again')).toBe('again');
  });

  itRedis('the unrepaired Bottleneck connection does fail on this Redis (the repair is needed)', async () => {
    const id = `bre-batch-test:${randomUUID()}`;
    const b = new Bottleneck({
      id,
      datastore: 'ioredis',
      clientOptions: { host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) },
      clearDatastore: true,
      minTime: 1,
    });
    b.on('error', () => undefined);
    cleanup.push(() => b.disconnect(false));
    await b.ready();
    await b.schedule(async () => 1);
    const probe = new Redis(REDIS_URL);
    cleanup.push(async () => {
      probe.disconnect();
    });
    const info = await probe.info('server');
    const major = Number(/redis_version:(\d+)/.exec(info)?.[1] ?? 0);
    await probe.del(...(await probe.keys(`b_${id}_*`)));
    const err = await b
      .schedule(async () => 2)
      .then(
        () => undefined,
        (e: Error) => e,
      );
    if (major >= 7) expect(err?.message).toBe('ERR SETTINGS_KEY_NOT_FOUND');
    else expect(err).toBeUndefined();
  });

  itRedis('the last worker to start sets the shared rate, and says so when it differs', async () => {
    const suffix = randomUUID();
    const lines: string[] = [];
    const a = await redisLimiterFactory(REDIS_URL, { idSuffix: suffix })(settings({ limit: 10, windowMs: 1000 }));
    cleanup.push(() => a.stop());
    const b = await redisLimiterFactory(REDIS_URL, { idSuffix: suffix })(
      settings({ limit: 20, windowMs: 1000 }, { log: (l) => lines.push(l) }),
    );
    cleanup.push(() => b.stop());
    expect(lines.join('\n')).toMatch(/another worker had set one start every 105\.0 ms; now every 53\.0 ms \(20\/s\)/);
    const probe = new Redis(REDIS_URL);
    cleanup.push(async () => {
      probe.disconnect();
    });
    expect(Number(await probe.hget(`b_${(b as RedisLimiter).id}_settings`, 'minTime'))).toBe(53);
  });

  itRedis('services the pipeline does not call, and services with --rate off, stay local', async () => {
    const s = settings({ limit: 10, windowMs: 1000 });
    const f = redisLimiterFactory(REDIS_URL, { idSuffix: randomUUID() });
    const bureau = await f({ ...s, service: 'bureau', used: false });
    expect('id' in bureau).toBe(false);
    const off = await f({ ...s, rate: null });
    expect('id' in off).toBe(false);
    await bureau.stop();
    await off.stop();
  });

  itRedis(
    'Redis killed and restarted mid-run: every job still runs once, none is lost',
    async () => {
      const own = new OwnRedis(await sparePort());
      await own.start();
      cleanup.push(() => own.kill());
      const f = redisLimiterFactory(own.url, { idSuffix: randomUUID(), outageMs: 30_000 });
      const l = (await f(settings({ limit: 50, windowMs: 1000 }))) as RedisLimiter;
      cleanup.push(() => l.stop());
      const ran: number[] = [];
      const all = Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          l.schedule(async () => {
            ran.push(i);
            await sleep(20);
            return i;
          }),
        ),
      );
      await waitFor(() => ran.length >= 5, 10_000, 'jobs to run before the kill');
      await own.kill();
      // The outage itself: long enough for queued jobs to fail against the missing Redis and be re-scheduled.
      await sleep(REDIS_OUTAGE_MS);
      await own.start();
      const results = await all;
      expect(results).toEqual(Array.from({ length: 60 }, (_, i) => i));
      expect([...ran].sort((x, y) => x - y)).toEqual(results);
    },
    45_000,
  );
});
