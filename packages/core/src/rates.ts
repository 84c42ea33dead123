/** Rate limits per service: the documented defaults, and how a rate is written. */
import type { ServiceName } from './types.js';

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

/**
 * A rate as `--rate` takes it (packages/core/src/units.ts): per second below a minute's window, else per minute;
 * `off` without a limit.
 */
export function describeRate(rate: Rate | null): string {
  if (!rate) return 'off';
  const round = (x: number) => Math.round(x * 100) / 100;
  if (rate.windowMs % 60_000 === 0) return `${round((rate.limit * 60_000) / rate.windowMs)}/min`;
  return `${round((rate.limit * 1000) / rate.windowMs)}/s`;
}

/**
 * A limit as describeRate writes it (summary.json's `rate_limit`) in calls a minute, the unit every achieved
 * rate is told in, so that the two read side by side: `20/s` -> `1200/min`; `/min` and `off` as they are.
 */
export function limitPerMinute(described: string): string {
  const m = /^(\d+(?:\.\d+)?)\/s$/.exec(described);
  return m ? `${Math.round(Number(m[1]) * 60 * 100) / 100}/min` : described;
}
