/** Rate limits per service: the documented defaults and the `--rate SERVICE=N/UNIT` syntax. */
import { BreError } from '../errors.js';
import { SERVICES, type ServiceName } from '../types.js';

export interface Rate {
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * Decision spec section 8: 500/min per IP for workflows, 1000/min for bureau features. The account
 * service's limit is not documented (account spec section 8): 120/min is a conservative start from which
 * its limiter adapts upwards (src/limits/adaptive.ts).
 */
export const DEFAULT_RATES: Readonly<Record<ServiceName, Rate>> = {
  workflow: { limit: 500, windowMs: 60_000 },
  bureau: { limit: 1000, windowMs: 60_000 },
  account: { limit: 120, windowMs: 60_000 },
};

/** Parses `SERVICE=N/UNIT` or `SERVICE=off`; `null` means no limit. */
export function parseRateArg(arg: string): { service: ServiceName; rate: Rate | null } {
  const m = /^\s*([a-z]+)\s*=\s*(?:(off)|(\d+(?:\.\d+)?)\s*\/\s*(s|sec|second|min|minute|m))\s*$/i.exec(arg);
  if (!m) throw new BreError('USAGE', `Expected --rate SERVICE=N/UNIT (e.g. workflow=500/min) or SERVICE=off, got '${arg}'`, { field: 'rate' });
  const service = m[1].toLowerCase() as ServiceName;
  if (!SERVICES.includes(service)) throw new BreError('USAGE', `Expected --rate SERVICE to be one of ${SERVICES.join(', ')}, got '${m[1]}'`, { field: 'rate' });
  if (m[2]) return { service, rate: null };
  const limit = Number(m[3]);
  if (!(limit > 0)) throw new BreError('USAGE', `Expected a rate above 0 for ${service}, got '${m[3]}'`, { field: 'rate' });
  const unit = m[4].toLowerCase();
  return { service, rate: { limit, windowMs: unit.startsWith('s') ? 1000 : 60_000 } };
}

export function resolveRates(args: readonly string[] | undefined): Record<ServiceName, Rate | null> {
  const out: Record<ServiceName, Rate | null> = { ...DEFAULT_RATES };
  for (const a of args ?? []) {
    if (/^\s*off\s*$/i.test(a)) { for (const s of SERVICES) out[s] = null; continue; }
    const { service, rate } = parseRateArg(a);
    out[service] = rate;
  }
  return out;
}

export function describeRate(rate: Rate | null): string {
  if (!rate) return 'off';
  return rate.windowMs === 1000 ? `${rate.limit}/s` : `${(rate.limit * 60_000) / rate.windowMs}/min`;
}
