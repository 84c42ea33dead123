/**
 * src/limits/redis.ts and src/limits/redis-connection.ts reach into Bottleneck's internals: its private
 * `_run` and `_drainAll`, the connection's `__scriptArgs__` hook, the arguments Redis scripts receive and
 * the error texts its recovery compares. Bottleneck is unmaintained and 2.19.5 is the version those repairs
 * were written against, so package.json pins it exactly; each check here names one internal they rely on
 * and, when it fails, says what changed and which repair to re-check. (With a Redis, redis-limiter.test.ts
 * checks the repairs' behaviour end to end.)
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Bottleneck from 'bottleneck';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

const WRITTEN_AGAINST = '2.19.5';
const LIB = dirname(createRequire(import.meta.url).resolve('bottleneck'));
const source = (file: string): string => readFileSync(join(LIB, file), 'utf8');

/** The private surface of a Bottleneck instance that src/limits/redis.ts uses. */
interface Internals {
  _run(index: string, job: { task: (...a: unknown[]) => unknown; args: unknown[] }, wait: number): unknown;
  _drainAll(): Promise<unknown>;
  queued(): number;
}

describe('Bottleneck internals patched by src/limits', () => {
  it(`package.json pins bottleneck to exactly ${WRITTEN_AGAINST}, and that is the version installed`, () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(
      pkg.dependencies.bottleneck,
      'a range would let npm install a Bottleneck whose internals the repairs were not written against',
    ).toBe(WRITTEN_AGAINST);
    const installed = (Bottleneck as unknown as { version: string }).version;
    expect(
      installed,
      `installed bottleneck ${installed}: re-check src/limits/redis.ts and redis-connection.ts against it`,
    ).toBe(WRITTEN_AGAINST);
  });

  it.each([
    [
      'RedisDatastore.js',
      'all_args = [Date.now(), _this3.clientId].concat(args);',
      'RepairedIORedisConnection.__scriptArgs__ replaces args[0] ("now") with the Redis clock',
    ],
    [
      'RedisDatastore.js',
      '_this3.connection.__scriptArgs__(name, _this3.originalId, all_args, function (err, replies) {',
      'RepairedIORedisConnection.__scriptArgs__ wraps the callback of every script call',
    ],
    [
      'RedisDatastore.js',
      'runScript("register", _this7.prepareArray([index, weight, expiration]))',
      'RepairedIORedisConnection.__scriptArgs__ reads the job index of a register call as args[2]',
    ],
    [
      'RedisDatastore.js',
      'if (e.message === "SETTINGS_KEY_NOT_FOUND") {',
      'stripErrPrefix: Bottleneck recognises a lost settings key by this exact message',
    ],
    [
      'RedisDatastore.js',
      '} else if (e.message === "UNKNOWN_CLIENT") {',
      'stripErrPrefix: Bottleneck recognises a lost client registration by this exact message',
    ],
    [
      'RedisDatastore.js',
      'if (e.message.indexOf("OVERWEIGHT") === 0) {',
      'stripErrPrefix: Bottleneck recognises an overweight job by this message prefix',
    ],
    [
      'lua.json',
      'return {true, wait, reservoir}',
      'RepairedIORedisConnection records a reserved slot as now + replies[1] when replies[0] is true',
    ],
    [
      'Bottleneck.js',
      'this._run(index, next, wait);',
      'RedisLimiter wraps _run(index, job, wait) to check a job starts in its reserved slot',
    ],
    [
      'Bottleneck.js',
      'return job.doExecute(this._limiter, clearGlobalState, run, free);',
      'RedisLimiter replaces job.task inside _run: the task must be read later, when the job executes',
    ],
    [
      'Job.js',
      '_this.task(..._this.args)',
      'RedisLimiter replaces job.task inside _run: the job must call this.task when it executes',
    ],
    [
      'IORedisConnection.js',
      'this.subscriber = this.client.duplicate();',
      'RepairedIORedisConnection is given the ioredis client, which Bottleneck keeps as this.client and duplicates for pub/sub',
    ],
  ])('%s still has `%s`', (file, snippet, reliedOnBy) => {
    expect(
      source(file).includes(snippet),
      `bottleneck/lib/${file} no longer contains \`${snippet}\`, which ${reliedOnBy}`,
    ).toBe(true);
  });

  it('_run(index, job, wait) is called for every job, and a task replaced there is the one that runs', async () => {
    const limiter = new Bottleneck({ maxConcurrent: 1 });
    const internals = limiter as unknown as Internals;
    expect(internals._run.length, 'Bottleneck.prototype._run no longer takes (index, job, wait)').toBe(3);
    const seen: string[] = [];
    const run = internals._run;
    internals._run = function (this: unknown, index, job, wait) {
      const task = job.task;
      job.task = (...args: unknown[]) => {
        seen.push(`${typeof index}:${args.join(',')}`);
        return task(...args);
      };
      return run.call(this, index, job, wait);
    };
    const result = await limiter.schedule(async (a: number, b: number) => a + b, 2, 3);
    expect(result).toBe(5);
    expect(seen, "the task replaced in _run did not run: RedisLimiter's late-start check would never fire").toEqual([
      'string:2,3',
    ]);
    await limiter.stop();
  });

  it("queued() and _drainAll() exist: the Redis limiter's watchdog re-drains a stuck queue with them", async () => {
    const limiter = new Bottleneck({ maxConcurrent: 1 });
    const internals = limiter as unknown as Internals;
    expect(typeof internals._drainAll, 'Bottleneck.prototype._drainAll is gone').toBe('function');
    expect(internals.queued()).toBe(0);
    await expect(internals._drainAll()).resolves.toBe(0);
    await limiter.stop();
  });

  it('IORedisConnection.prototype.__scriptArgs__(name, id, args, cb) returns [number of keys, ...keys, ...args, cb]', () => {
    const hook = (
      Bottleneck.IORedisConnection.prototype as unknown as {
        __scriptArgs__: (n: string, i: string, a: unknown[], c: () => void) => unknown[];
      }
    ).__scriptArgs__;
    expect(typeof hook, 'Bottleneck.IORedisConnection.prototype.__scriptArgs__ is gone').toBe('function');
    expect(hook.length).toBe(4);
    const cb = () => undefined;
    const args = [1234, 'client', 'job-index', 1, 5000];
    const out = hook.call({}, 'register', 'limiter-id', args, cb);
    const nKeys = out[0] as number;
    expect(out.slice(1, 1 + nKeys).every((k) => typeof k === 'string' && k.includes('limiter-id'))).toBe(true);
    expect(out.slice(1 + nKeys)).toEqual([...args, cb]);
  });
});
