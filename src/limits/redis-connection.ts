/**
 * The one Redis connection a process shares between its service limiters (Bottleneck's IORedisConnection: a
 * command client plus a duplicate for pub/sub), with two repairs to Bottleneck 2.19.5, made here rather than
 * as a patch (docs/decisions/redis-connection-repairs.md): a Lua error's `ERR ` prefix (Redis 7 and later)
 * stripped so that Bottleneck's own recovery works, and "now" taken from the Redis server's clock
 * (`RedisClock`), so that workers whose clocks disagree space their calls on one clock.
 */
import Bottleneck from 'bottleneck';
import { Redis, type RedisOptions } from 'ioredis';
import { BreError } from '@bre-batch/core/errors';

/** Script errors Bottleneck recognises by their exact text (see the header). */
const BOTTLENECK_CODES = /^ERR ((?:SETTINGS_KEY_NOT_FOUND|UNKNOWN_CLIENT)$|OVERWEIGHT:)/;

/** `ERR SETTINGS_KEY_NOT_FOUND` -> `SETTINGS_KEY_NOT_FOUND`; any other message is returned unchanged. */
export function stripErrPrefix(message: string): string {
  return BOTTLENECK_CODES.test(message) ? message.slice(4) : message;
}

type ScriptCallback = (err: Error | null | undefined, replies?: unknown) => void;

/** Offset from this process's clock to the Redis server's, in ms. */
export class RedisClock {
  offsetMs = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: Redis) {}

  /**
   * Takes the sample with the shortest round trip of `samples`: a reply that waited in a busy event loop
   * (a worker starting up) would skew the midpoint estimate by half its delay.
   */
  async measure(samples = 5): Promise<void> {
    let best: { rtt: number; offset: number } | undefined;
    for (let i = 0; i < samples; i += 1) {
      const t0 = performance.now();
      const [sec, usec] = await this.client.time();
      const t1 = performance.now();
      const redisMs = Number(sec) * 1000 + Number(usec) / 1000;
      // Redis read its clock about halfway through the round trip.
      const offset = redisMs - (performance.timeOrigin + (t0 + t1) / 2);
      if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset };
    }
    if (best) this.offsetMs = best.offset;
  }

  start(everyMs = 60_000): void {
    this.#timer = setInterval(() => {
      this.measure().catch(() => undefined);
    }, everyMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  now(): number {
    return Math.round(performance.timeOrigin + performance.now() + this.offsetMs);
  }
}

/** Bottleneck.IORedisConnection with the two repairs of the header. Internal hooks of Bottleneck 2.19.5. */
export class RepairedIORedisConnection extends Bottleneck.IORedisConnection {
  readonly clock: RedisClock;
  /** Set by the parent constructor: the command client (a duplicate serves pub/sub). */
  declare readonly client: Redis;

  constructor(options: Bottleneck.IORedisConnectionOptions & { client: Redis; clock: RedisClock }) {
    super(options);
    this.clock = options.clock;
  }

  /**
   * Job index -> the start time (Redis clock) of the slot its `register` reserved: `now + wait`. Taken by
   * the limiter when the job is scheduled (src/limits/redis.ts), to notice a job that starts late.
   */
  readonly #slots = new Map<string, number>();

  takeSlot(index: string): number | undefined {
    const at = this.#slots.get(index);
    this.#slots.delete(index);
    return at;
  }

  /** Called by RedisDatastore.runScript with `[now, clientId, ...args]` and the callback that settles it. */
  __scriptArgs__(name: string, id: string, args: unknown[], cb: ScriptCallback): unknown[] {
    const now = this.clock.now();
    const fixed: ScriptCallback = (err, replies) => {
      if (err && typeof err.message === 'string') err.message = stripErrPrefix(err.message);
      // register.lua answers {true, wait, reservoir} when it reserved a slot, {false} otherwise.
      if (!err && name === 'register' && Array.isArray(replies) && replies[0] === 1) {
        if (this.#slots.size > 10_000) this.#slots.clear();
        this.#slots.set(String(args[2]), now + Number(replies[1]));
      }
      cb(err, replies);
    };
    const withClock = args.length > 0 ? [now, ...args.slice(1)] : args;
    const parent = Bottleneck.IORedisConnection.prototype as unknown as {
      __scriptArgs__: (n: string, i: string, a: unknown[], c: ScriptCallback) => unknown[];
    };
    return parent.__scriptArgs__.call(this, name, id, withClock, fixed);
  }
}

/** `redis://user:pass@host:6379/0` -> `redis://host:6379/0`: the URL as it may appear in messages. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(unparsable Redis URL)';
  }
}

export interface OpenOptions {
  /** How long to wait for the first connection before giving up (default 5 s). */
  readonly connectTimeoutMs?: number;
}

/**
 * Connects and checks the server answers (PING), or throws CONFIG_INVALID (exit 2, nothing called): a
 * worker that cannot reach the shared limiter must not run at an unshared rate.
 */
export async function openRedis(
  url: string,
  opts: OpenOptions = {},
): Promise<{ connection: RepairedIORedisConnection; client: Redis }> {
  if (!/^rediss?:\/\//i.test(url)) {
    throw new BreError(
      'CONFIG_INVALID',
      `Expected --redis to be a redis:// or rediss:// URL, got '${redactRedisUrl(url)}'`,
      { field: 'redis' },
    );
  }
  const shown = redactRedisUrl(url);
  const timeoutMs = opts.connectTimeoutMs ?? 5000;
  const options: RedisOptions = {
    // While Redis is away, commands wait in ioredis's offline queue for ~20 reconnection attempts (~10 s)
    // and then fail; the limiter (src/limits/redis.ts) re-schedules them for longer outages.
    maxRetriesPerRequest: 20,
    enableOfflineQueue: true,
    connectTimeout: timeoutMs,
  };
  // Not lazyConnect: Bottleneck duplicates this client for pub/sub, and a lazy duplicate never connects.
  const client = new Redis(url, options);
  let lastError: unknown;
  let failStart: (err: Error) => void = () => undefined;
  // ioredis would retry a refused connection for ever; at start the first failure is the answer.
  client.on('error', (err) => {
    lastError = err;
    failStart(err);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        failStart = reject;
        if (client.status === 'ready') resolve();
        else client.once('ready', () => resolve());
      }).then(() => client.ping()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    client.disconnect();
    const why = (lastError ?? err) as Error;
    throw new BreError(
      'CONFIG_INVALID',
      `cannot reach Redis at ${shown} for the shared limiter (--redis): ${why.message ?? String(why)}. Start Redis, fix the URL, or run without --redis`,
      { field: 'redis', cause: err },
    );
  } finally {
    clearTimeout(timer);
    failStart = () => undefined;
  }
  const clock = new RedisClock(client);
  await clock.measure();
  clock.start();
  const connection = new RepairedIORedisConnection({ client, clock, Redis } as never);
  await connection.ready;
  return { connection, client };
}
