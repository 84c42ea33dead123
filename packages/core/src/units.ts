/**
 * The one grammar of rates and durations on every command line (`run`, `sandbox`):
 *   rate       N/UNIT, UNIT s (sec, second) or min (m, minute), N > 0 and may be a fraction: 500/min, 2.5/s
 *   --rate     SERVICE=N/UNIT, SERVICE=off, or off alone for every service; repeatable, later ones win
 *   duration   N with ms, s or m (min): 1500ms, 30s, 2m; a bare N is in the flag's own unit
 * Every failure is a BreError('USAGE') that reads "Expected X, got Y". And how a count is written (countText).
 */
import { BreError } from './errors.js';
import { DEFAULT_RATES, type Rate } from './rates.js';
import { SERVICES, type ServiceName } from './types.js';

export type RateOverrides = Partial<Record<ServiceName, Rate | null>>;

const RATE_FORM = 'SERVICE=N/UNIT (UNIT s or min, e.g. workflow=500/min), SERVICE=off or off';
const RATE_RE = /^\s*([a-z]+)\s*=\s*(?:(off)|(\d+(?:\.\d+)?)\s*\/\s*(s|sec|second|m|min|minute))\s*$/i;

function usage(flag: string, expected: string, got: string): never {
  throw new BreError('USAGE', `Expected --${flag} ${expected}, got '${got}'`, { field: flag, expected });
}

function serviceNamed(name: string, flag: string): ServiceName {
  const service = name.toLowerCase();
  if (!(SERVICES as readonly string[]).includes(service))
    usage(flag, `SERVICE to be one of ${SERVICES.join(', ')}`, name);
  return service as ServiceName;
}

/** One `SERVICE=N/UNIT` or `SERVICE=off` (null: no limit). */
export function parseRateArg(arg: string, flag = 'rate'): { service: ServiceName; rate: Rate | null } {
  const m = RATE_RE.exec(arg);
  if (!m) usage(flag, RATE_FORM, arg);
  const service = serviceNamed(m[1], flag);
  if (m[2]) return { service, rate: null };
  const limit = Number(m[3]);
  if (!(limit > 0)) usage(flag, `${service} to be more than 0 requests per unit`, m[3]);
  return { service, rate: { limit, windowMs: m[4].toLowerCase().startsWith('s') ? 1000 : 60_000 } };
}

/** `--rate` values in order: each service named gets its rate (null: off); `off` alone turns every one off. */
export function parseRateSpecs(specs: readonly string[], flag = 'rate'): RateOverrides {
  const out: RateOverrides = {};
  for (const spec of specs) {
    if (/^\s*off\s*$/i.test(spec)) {
      for (const s of SERVICES) out[s] = null;
      continue;
    }
    const { service, rate } = parseRateArg(spec, flag);
    out[service] = rate;
  }
  return out;
}

/** `run --rate`: the documented limits (DEFAULT_RATES) with the given values over them. */
export function resolveRates(specs: readonly string[] | undefined): Record<ServiceName, Rate | null> {
  return { ...DEFAULT_RATES, ...parseRateSpecs(specs ?? []) };
}

const DURATION_RE = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, min: 60_000 } as const;

export interface DurationRule {
  /** The flag, for the message (`stop-grace`). */
  readonly flag: string;
  /** The unit of a bare number: seconds for --timeout and --stop-grace, ms for the sandbox's *-ms flags. */
  readonly unit: 's' | 'ms';
  /** The least allowed, ms (default 0). */
  readonly min?: number;
}

/** A duration in whole milliseconds; a number (from the programmatic API) is in the rule's unit. */
export function parseDuration(value: string | number, rule: DurationRule): number {
  const text = String(value);
  const m = DURATION_RE.exec(text);
  const ms = m ? Math.round(Number(m[1]) * UNIT_MS[(m[2] ?? rule.unit) as keyof typeof UNIT_MS]) : NaN;
  const min = rule.min ?? 0;
  if (!(ms >= min)) {
    const bare = rule.unit === 's' ? 'seconds' : 'milliseconds';
    usage(
      rule.flag,
      `to be a duration of ${min > 0 ? 'more than 0' : 'at least 0'} (1500ms, 30s, 2m; a bare number is ${bare})`,
      text,
    );
  }
  return ms;
}

const SIZE_RE = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?\s*$/i;
const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1e6,
  mib: 1024 ** 2,
  gb: 1e9,
  gib: 1024 ** 3,
};

/** A size in whole bytes: `16MiB`, `500kb`, `20MB`; a bare number is bytes. At least `min` (default 1). */
export function parseByteSize(value: string | number, flag: string, min = 1): number {
  const text = String(value);
  const m = SIZE_RE.exec(text);
  const bytes = m ? Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]) : NaN;
  if (!(bytes >= min))
    usage(flag, `to be a size of at least ${min} bytes (16MiB, 500KB; a bare number is bytes)`, text);
  return bytes;
}

/** `SERVICE=DURATION` values (or a bare DURATION for every service) over `defaults`, e.g. `--timeout`. */
export function parseServiceDurations(
  specs: readonly string[] | undefined,
  flag: string,
  defaults: Readonly<Record<ServiceName, number>>,
): Record<ServiceName, number> {
  const out = { ...defaults };
  const rule: DurationRule = { flag, unit: 's', min: 1 };
  for (const spec of specs ?? []) {
    const eq = spec.indexOf('=');
    if (eq === -1) {
      const ms = parseDuration(spec, rule);
      for (const s of SERVICES) out[s] = ms;
      continue;
    }
    out[serviceNamed(spec.slice(0, eq).trim(), flag)] = parseDuration(spec.slice(eq + 1), rule);
  }
  return out;
}

/**
 * `x` as `x.toLocaleString('en-US')` writes it ("12,345", "-0"), without Intl for a whole number: a process's
 * first Intl call loads ICU's number data, which a short run paid for its plan line alone (docs/performance.md,
 * "Start-up"). Any other number goes to Intl as before.
 */
export function countText(x: number): string {
  if (!Number.isSafeInteger(x)) return x.toLocaleString('en-US');
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  return `${sign}${String(Math.abs(x)).replace(/\B(?=(\d{3})+$)/g, ',')}`;
}
