/** One limiter per service used by the pipeline: local Bottleneck, adaptive for account, or shared via Redis. */
import { AdaptiveLimiter } from '../limits/adaptive.js';
import { BottleneckLimiter, ConcurrencyLimiter, type ServiceLimiter } from '../limits/limiter.js';
import { DEFAULT_RATES } from '../limits/rates.js';
import { SERVICES, type ServiceName } from '../types.js';
import type { RunSettings } from './settings.js';

export type LimiterFactory = (service: ServiceName, settings: RunSettings) => Promise<ServiceLimiter>;

export async function localLimiter(service: ServiceName, s: RunSettings): Promise<ServiceLimiter> {
  const rate = s.rates[service];
  if (!rate) return new ConcurrencyLimiter(service, s.concurrency[service]);
  const base = { service, rate, concurrency: s.concurrency[service] };
  // The account limit is undocumented: adapt, unless the user set one explicitly and it is not the default.
  if (service === 'account' && rate === DEFAULT_RATES.account) return new AdaptiveLimiter({ ...base, rate });
  return new BottleneckLimiter(base);
}

export async function createLimiters(s: RunSettings, factory: LimiterFactory): Promise<Record<ServiceName, ServiceLimiter>> {
  const out = {} as Record<ServiceName, ServiceLimiter>;
  for (const service of SERVICES) out[service] = await factory(service, s);
  return out;
}
