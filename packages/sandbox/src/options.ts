/**
 * Pure parsing and validation of sandbox options, shared by `bre-batch sandbox` (text flags), the
 * programmatic API and the /__sandbox/ control paths. Every failure is a BreError('USAGE') whose message
 * reads "Expected X, got Y".
 */
import { BreError } from '@bre-batch/core/errors';
import { parseDuration, parseRateSpecs as parseServiceRates } from '@bre-batch/core/units';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import { parseCidr, type Cidr } from './cidr.js';
import type { Rate } from './rate.js';
import { FAULT_KINDS, type FaultKind } from './stats.js';
import { parseVersionSwitches, type VersionSwitch } from './versions.js';

export type Faults = Partial<Record<FaultKind, number>>;
export type RateOverrides = Partial<Record<ServiceName, Rate | null>>;
/** Limits of single caller addresses, over the sandbox's own (an egress address throttled harder than the rest). */
export type CallerRates = Readonly<Record<string, RateOverrides>>;

function usage(field: string, expected: string, got: unknown): never {
  throw new BreError(
    'USAGE',
    `Expected ${expected}, got ${typeof got === 'string' ? `'${got}'` : JSON.stringify(got)}`,
    { field, expected },
  );
}

/**
 * `--rate` values in the grammar every command shares (packages/core/src/units.ts); a fractional limit becomes a
 * whole one over a longer window (wholeRate), as the sandbox's sliding window counts whole requests.
 */
export function parseRateSpecs(specs: readonly string[]): RateOverrides {
  const out: RateOverrides = {};
  for (const [service, rate] of Object.entries(parseServiceRates(specs)) as [ServiceName, Rate | null][]) {
    out[service] = rate && wholeRate(rate.limit, rate.windowMs);
  }
  return out;
}

/**
 * A fractional limit (e.g. `2.5/s`, which `run --rate` accepts) becomes the smallest whole-number limit with
 * the same average rate over a proportionally longer window: 2.5 per 1 s -> 5 per 2 s.
 */
function wholeRate(limit: number, windowMs: number): Rate {
  for (let m = 1; m <= 1000; m++) {
    const scaled = limit * m;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-9 && Math.round(scaled) >= 1)
      return { limit: Math.round(scaled), windowMs: Math.round(windowMs * m) };
  }
  return { limit: Math.max(1, Math.round(limit)), windowMs };
}

/** A rate given as an object (control path, programmatic API). */
export function validateRate(value: unknown, field = 'rate'): Rate | null {
  if (value === null) return null;
  const r = value as { limit?: unknown; windowMs?: unknown };
  const ok =
    typeof value === 'object' &&
    typeof r.limit === 'number' &&
    Number.isFinite(r.limit) &&
    r.limit > 0 &&
    typeof r.windowMs === 'number' &&
    Number.isFinite(r.windowMs) &&
    r.windowMs >= 1;
  if (!ok) usage(field, `${field} to be null or {"limit": a number > 0, "windowMs": a number >= 1}`, value);
  return wholeRate(r.limit as number, r.windowMs as number);
}

/** A single caller address (not a block): the key its window is kept under (IPv4-mapped IPv6 as IPv4). */
function callerAddress(text: string, field: string, expected: string, got: unknown): string {
  const c = parseCidr(text);
  if (!c || text.includes('/')) usage(field, expected, got);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text.trim());
  return mapped ? mapped[1] : text.trim().toLowerCase();
}

/**
 * `--caller-rate ADDR:SERVICE=N/UNIT` (repeatable): one caller address with its own limit, in the grammar of
 * `--rate`, over the sandbox's limit for that service; an IPv6 address in brackets (`[::1]:workflow=5/s`).
 */
export function parseCallerRates(specs: readonly string[]): CallerRates {
  const expected = '--caller-rate ADDR:SERVICE=N/UNIT (e.g. 127.0.0.3:workflow=250/min; an IPv6 address in brackets)';
  const out: Record<string, RateOverrides> = {};
  for (const spec of specs) {
    const m = /^\s*(?:\[([^\]]+)\]|([^\s:[\]]+)):(.+)$/.exec(spec);
    if (!m) usage('caller-rate', expected, spec);
    const address = callerAddress(m[1] ?? m[2], 'caller-rate', expected, spec);
    out[address] = { ...out[address], ...parseRateSpecs([m[3]]) };
  }
  return out;
}

/** Caller rates given as an object (programmatic API): `{"127.0.0.3": {"workflow": {"limit": 5, "windowMs": 2000}}}`. */
export function validateCallerRates(value: unknown): CallerRates {
  if (value === undefined) return {};
  const expected = 'callerRates as {"ADDRESS": {"SERVICE": {"limit": N, "windowMs": MS} or null}}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) usage('callerRates', expected, value);
  const out: Record<string, RateOverrides> = {};
  for (const [addr, rates] of Object.entries(value as Record<string, unknown>)) {
    const address = callerAddress(addr, 'callerRates', expected, addr);
    if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) usage('callerRates', expected, value);
    const own: RateOverrides = {};
    for (const [service, rate] of Object.entries(rates as Record<string, unknown>)) {
      if (!(SERVICES as readonly string[]).includes(service))
        usage('callerRates', `a service among ${SERVICES.join(', ')}`, service);
      own[service as ServiceName] = validateRate(rate, `rate of ${service} for ${address}`);
    }
    out[address] = own;
  }
  return out;
}

/** Checks fault probabilities: known kinds, each in [0, 1], summing to at most 1 (one draw per request). */
export function validateFaults(value: unknown): Faults {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) usage('faults', 'faults as an object of probabilities', value);
  const out: Faults = {};
  let sum = 0;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(FAULT_KINDS as readonly string[]).includes(k))
      usage('faults', `a fault kind among ${FAULT_KINDS.join(', ')}`, k);
    if (typeof v !== 'number' || !(v >= 0 && v <= 1))
      usage('faults', `a probability between 0 and 1 for fault ${k}`, v);
    out[k as FaultKind] = v;
    sum += v;
  }
  if (sum > 1 + 1e-9) usage('faults', 'fault probabilities summing to at most 1', Number(sum.toFixed(6)));
  return out;
}

/** A gateway that answers every service call 429 for `forMs` from its first call (packages/sandbox/src/server.ts). */
export interface ThrottleWindow {
  readonly forMs: number;
  /** Seconds in each 429's Retry-After (0, as some gateways send while they throttle). */
  readonly retryAfter: number;
}

export const NO_THROTTLE: ThrottleWindow = { forMs: 0, retryAfter: 0 };

export function validateThrottle(value: unknown): ThrottleWindow {
  const t = value as { forMs?: unknown; retryAfter?: unknown } | null;
  const ok =
    typeof value === 'object' &&
    value !== null &&
    typeof t!.forMs === 'number' &&
    Number.isFinite(t!.forMs) &&
    t!.forMs >= 0 &&
    (t!.retryAfter === undefined ||
      (typeof t!.retryAfter === 'number' && Number.isFinite(t!.retryAfter) && t!.retryAfter >= 0));
  if (!ok) usage('throttle', '{"forMs": a number >= 0, "retryAfter": seconds >= 0}', value);
  return { forMs: t!.forMs as number, retryAfter: (t!.retryAfter as number | undefined) ?? 0 };
}

/** `--faults 429=0.05,503=0.02,reset=0.01,slow=0.01,malformed=0.01,empty=0.01,html=0.01,trickle=0.01` (or `none`). */
export function parseFaultSpec(text: string): Faults {
  const t = text.trim();
  if (t === '' || /^(none|off)$/i.test(t)) return {};
  const obj: Record<string, number> = {};
  for (const part of t.split(',')) {
    const m = /^\s*([a-z0-9]+)\s*=\s*([0-9]*\.?[0-9]+)\s*$/i.exec(part);
    if (!m) usage('faults', '--faults KIND=PROBABILITY[,KIND=PROBABILITY...] (e.g. 429=0.05,503=0.02)', part);
    obj[m[1].toLowerCase()] = Number(m[2]);
  }
  return validateFaults(obj);
}

function parsePort(text: string | number): number {
  const n = typeof text === 'number' ? text : /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) usage('port', '--port to be a whole number from 0 to 65535', text);
  return n;
}

/** A duration in whole milliseconds (>= 0): a bare number is milliseconds, `2s` works too. */
function parseMs(text: string | number, flag: string): number {
  return parseDuration(text, { flag, unit: 'ms' });
}

export function parseAllow(entries: readonly string[]): Cidr[] {
  return entries
    .flatMap((e) => e.split(','))
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((e) => {
      const c = parseCidr(e);
      if (!c) usage('allow', '--allow to be an IP address or CIDR block (e.g. 10.0.0.0/8 or ::1)', e);
      return c;
    });
}

function parseSeed(text: string | number): number | string {
  if (typeof text === 'number') return text;
  return /^\d+$/.test(text) && Number(text) <= 0xffffffff ? Number(text) : text;
}

/** The flags of `bre-batch sandbox` as yargs hands them over (all strings, so messages can quote them). */
export interface SandboxFlags {
  readonly port?: string | number;
  readonly host?: string;
  readonly rate?: readonly string[] | string;
  readonly 'caller-rate'?: readonly string[] | string;
  readonly 'latency-ms'?: string | number;
  readonly faults?: string;
  readonly seed?: string | number;
  readonly allow?: readonly string[] | string;
  readonly 'bsa-ready-after'?: string | number;
  readonly 'slow-ms'?: string | number;
  readonly 'trickle-ms'?: string | number;
  readonly 'throttle-for'?: string | number;
  readonly 'throttle-retry-after'?: string | number;
  readonly 'switch-version'?: readonly string[] | string;
}

export interface ParsedSandboxFlags {
  readonly port: number;
  readonly host: string;
  readonly rate: RateOverrides;
  readonly callerRates?: CallerRates;
  readonly latencyMs: number;
  readonly faults: Faults;
  readonly seed?: number | string;
  readonly allow?: readonly string[];
  readonly bsaReadyAfterMs?: number;
  readonly slowMs?: number;
  readonly trickleMs?: number;
  readonly throttle?: ThrottleWindow;
  readonly versionSwitches?: readonly VersionSwitch[];
}

const list = (v: readonly string[] | string | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? [...v] : [v as string];

/** Flags -> sandbox options; throws BreError('USAGE') with "Expected X, got Y". */
export function parseSandboxFlags(f: SandboxFlags): ParsedSandboxFlags {
  const host = f.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '' || /\s/.test(host))
    usage('host', '--host to be a host name or IP address', host);
  const allow = list(f.allow);
  parseAllow(allow);
  return {
    port: f.port === undefined ? 0 : parsePort(f.port),
    host,
    rate: parseRateSpecs(list(f.rate)),
    callerRates: f['caller-rate'] === undefined ? undefined : parseCallerRates(list(f['caller-rate'])),
    latencyMs: f['latency-ms'] === undefined ? 0 : parseMs(f['latency-ms'], 'latency-ms'),
    faults: f.faults === undefined ? {} : parseFaultSpec(String(f.faults)),
    seed: f.seed === undefined ? undefined : parseSeed(f.seed),
    allow:
      allow.length > 0
        ? allow
            .flatMap((e) => e.split(','))
            .map((e) => e.trim())
            .filter((e) => e !== '')
        : undefined,
    bsaReadyAfterMs: f['bsa-ready-after'] === undefined ? undefined : parseMs(f['bsa-ready-after'], 'bsa-ready-after'),
    slowMs: f['slow-ms'] === undefined ? undefined : parseMs(f['slow-ms'], 'slow-ms'),
    trickleMs: f['trickle-ms'] === undefined ? undefined : parseMs(f['trickle-ms'], 'trickle-ms'),
    throttle:
      f['throttle-for'] === undefined
        ? undefined
        : {
            forMs: parseMs(f['throttle-for'], 'throttle-for'),
            retryAfter: f['throttle-retry-after'] === undefined ? 0 : parseRetryAfterFlag(f['throttle-retry-after']),
          },
    ...(f['switch-version'] === undefined ? {} : { versionSwitches: parseVersionSwitches(list(f['switch-version'])) }),
  };
}

function parseRetryAfterFlag(text: string | number): number {
  const n = typeof text === 'number' ? text : /^\d+$/.test(String(text).trim()) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 0)
    usage('throttle-retry-after', '--throttle-retry-after to be a whole number of seconds >= 0', text);
  return n;
}

export function describeFaults(f: Faults): string {
  const parts = Object.entries(f)
    .filter(([, p]) => (p ?? 0) > 0)
    .map(([k, p]) => `${k}=${p}`);
  return parts.length > 0 ? parts.join(',') : 'none';
}
