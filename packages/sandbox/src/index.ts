/**
 * The built-in sandbox: a faithful, fault-injecting emulator of the decision/workflow service, the bureau
 * feature service and the account transaction service, on one loopback origin. Used by `bre-batch run`
 * when no base URL is set, by every test, and by `bre-batch sandbox`. See ../README.md.
 */
import type { ServiceName } from '@bre-batch/core/types';
import { SERVICES } from '@bre-batch/core/types';
import { LOOPBACK_ALLOW } from './cidr.js';
import {
  NO_THROTTLE,
  parseAllow,
  validateCallerRates,
  validateFaults,
  validateRate,
  validateThrottle,
  type CallerRates,
  type Faults,
  type ThrottleWindow,
} from './options.js';
import type { Rate } from './rate.js';
import { SandboxServer } from './server.js';
import type { SandboxStats } from './stats.js';
import { validateVersionSwitches, type VersionSwitch } from './versions.js';

export type { SandboxStats, ServiceStats, CallerStats } from './stats.js';
export type { Rate } from './rate.js';

/** Built-in credentials (alphanumeric, like the real ones); override with BRE_CLIENT_ID / BRE_AUTH_TOKEN. */
export const DEFAULT_CLIENT_ID = 'sandboxclient';
export const DEFAULT_AUTH_TOKEN = 'sandboxtoken0000';

/**
 * Limits the sandbox enforces by default: the documented per-IP limits (decision spec section 8) and,
 * for the account service whose limit is not documented, 300 per minute.
 */
export const SANDBOX_LIMITS: Readonly<Record<ServiceName, Rate>> = {
  workflow: { limit: 500, windowMs: 60_000 },
  bureau: { limit: 1000, windowMs: 60_000 },
  account: { limit: 300, windowMs: 60_000 },
};

const DEFAULT_SLOW_MS = 60_000;
/** One byte a second: the trickling proxy of the slow-answer tests. */
const DEFAULT_TRICKLE_MS = 1_000;
const DEFAULT_BSA_READY_AFTER_MS = 2_000;
const DEFAULT_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export interface SandboxOptions {
  /** Default 0 (an ephemeral port). */
  readonly port?: number;
  /** Default '127.0.0.1'. */
  readonly host?: string;
  /** Default: env BRE_CLIENT_ID, else DEFAULT_CLIENT_ID. */
  readonly clientId?: string;
  /** Default: env BRE_AUTH_TOKEN, else DEFAULT_AUTH_TOKEN. */
  readonly authToken?: string;
  /** Per-service limits; a missing service keeps its SANDBOX_LIMITS entry, null turns the limit off. */
  readonly rate?: Partial<Record<ServiceName, Rate | null>>;
  /**
   * Limits of single caller addresses over `rate`, by address and service (`{"127.0.0.4": {"workflow": {limit: 5,
   * windowMs: 1000}}}`): one egress address throttled harder than the others. They stay over setRate.
   */
  readonly callerRates?: CallerRates;
  /** Added to every answer of a service path (default 0). */
  readonly latencyMs?: number;
  /** Per-request fault probabilities (one draw per request; sum at most 1). */
  readonly faults?: Faults;
  /** How long a `slow` fault hangs before answering normally (default 60 000 ms). */
  readonly slowMs?: number;
  /** Ms between the bytes of a `trickle` fault's body (default 1000: one byte a second). */
  readonly trickleMs?: number;
  /** A gateway answering every service call 429 for `forMs` from its first call, with `Retry-After: retryAfter` (default: never). */
  readonly throttle?: ThrottleWindow;
  /** Seeds the fault PRNG (default: random, reported in stats().seed). */
  readonly seed?: number | string;
  /** Caller IP allow-list, CIDR or single addresses (default loopback only: 127.0.0.0/8 and ::1). */
  readonly allow?: readonly string[];
  /** BSA sessions stay 'processing' this long after their first status_check (default 2000 ms). */
  readonly bsaReadyAfterMs?: number;
  /** Larger request bodies get 413 (default 10 MiB). */
  readonly bodyLimitBytes?: number;
  /** Base clock in ms (default Date.now); `clock.advance` moves the sandbox clock on top of it. */
  readonly now?: () => number;
  /** Workflow endpoints answering with another version from a given call or time on (./versions.ts). */
  readonly versionSwitches?: readonly VersionSwitch[];
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:40123, the same origin for all three services. */
  readonly url: string;
  readonly urls: { readonly workflow: string; readonly bureau: string; readonly account: string };
  readonly clientId: string;
  readonly authToken: string;
  readonly clock: { advance(ms: number): void; now(): number };
  stats(): SandboxStats;
  setFaults(f: SandboxOptions['faults']): void;
  /** Throttles every service call for `forMs` from the next call on (429 with Retry-After `retryAfter`). */
  setThrottle(t: ThrottleWindow): void;
  setRate(service: ServiceName, rate: Rate | null): void;
  /** Destroys every connection from these caller addresses until called again without them (a network going away). */
  setBlocked(addresses: readonly string[]): void;
  /** Replaces the version switches (calls counted again from 0). */
  setVersionSwitches(switches: readonly VersionSwitch[]): void;
  /** Closes the server and every open socket at once (hung `slow` requests too). */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`Expected ${name} to be a number >= 0, got ${value}`);
  return value;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const rates = { ...SANDBOX_LIMITS } as Record<ServiceName, Rate | null>;
  for (const s of SERVICES) {
    const r = opts.rate?.[s];
    if (r !== undefined) rates[s] = validateRate(r, `rate of ${s}`);
  }
  const clientId = opts.clientId || process.env.BRE_CLIENT_ID || DEFAULT_CLIENT_ID;
  const authToken = opts.authToken || process.env.BRE_AUTH_TOKEN || DEFAULT_AUTH_TOKEN;
  const host = opts.host ?? '127.0.0.1';
  const sb = new SandboxServer({
    clientId,
    authToken,
    rates,
    callerRates: validateCallerRates(opts.callerRates),
    latencyMs: nonNegative(opts.latencyMs, 0, 'latencyMs'),
    faults: validateFaults(opts.faults ?? {}),
    slowMs: nonNegative(opts.slowMs, DEFAULT_SLOW_MS, 'slowMs'),
    trickleMs: nonNegative(opts.trickleMs, DEFAULT_TRICKLE_MS, 'trickleMs'),
    throttle: validateThrottle(opts.throttle ?? NO_THROTTLE),
    seed: opts.seed ?? Math.floor(Math.random() * 0xffffffff),
    allow: parseAllow(opts.allow ?? LOOPBACK_ALLOW),
    bsaReadyAfterMs: nonNegative(opts.bsaReadyAfterMs, DEFAULT_BSA_READY_AFTER_MS, 'bsaReadyAfterMs'),
    bodyLimitBytes: nonNegative(opts.bodyLimitBytes, DEFAULT_BODY_LIMIT_BYTES, 'bodyLimitBytes'),
    now: opts.now ?? Date.now,
    versionSwitches: validateVersionSwitches(opts.versionSwitches),
  });
  await new Promise<void>((resolve, reject) => {
    sb.server.once('error', reject);
    sb.server.listen(opts.port ?? 0, host, () => {
      sb.server.off('error', reject);
      resolve();
    });
  });
  const address = sb.server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 0);
  const url = `http://${urlHost(host)}:${port}`;
  sb.baseUrl = url;
  return {
    url,
    urls: { workflow: url, bureau: url, account: url },
    clientId,
    authToken,
    clock: { advance: (ms) => sb.advance(ms), now: () => sb.now() },
    stats: () => sb.stats(),
    setFaults: (f) => sb.setFaults(f),
    setThrottle: (t) => sb.setThrottle(t),
    setRate: (service, rate) => sb.setRate(service, rate),
    setBlocked: (addresses) => sb.setBlocked(addresses),
    setVersionSwitches: (switches) => sb.versions.set(switches),
    close: () => sb.close(),
  };
}
