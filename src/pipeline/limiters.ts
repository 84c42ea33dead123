/**
 * One limiter per service, asked of the run's limiter factory (local by default, shared with --redis); with
 * --local-address, one such set per source address (./egress.ts), each at the full configured rate.
 */
import type { LimiterFactory } from '../limits/factory.js';
import type { ServiceLimiter } from '../limits/limiter.js';
import { kindOf } from '../stages/index.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import type { CallSettings, RunSettings } from './settings.js';

export async function createLimiters(
  s: CallSettings & Pick<RunSettings, 'pipeline' | 'log'>,
  factory: LimiterFactory,
  address?: string,
): Promise<Record<ServiceName, ServiceLimiter>> {
  const used = new Set(s.pipeline.stages.map((st) => kindOf(st).service));
  const out = {} as Record<ServiceName, ServiceLimiter>;
  try {
    for (const service of SERVICES) {
      out[service] = await factory({
        service,
        rate: s.rates[service],
        concurrency: s.concurrency[service],
        rateSlackMs: s.rateSlackMs,
        timeoutMs: s.timeoutsMs[service],
        used: used.has(service),
        clientId: s.clientId,
        log: s.log,
        ...(address ? { address } : {}),
      });
    }
  } catch (err) {
    // A limiter that could not be made (Redis refused) must not leave the others holding connections.
    for (const made of Object.values(out)) await made.stop();
    throw err;
  }
  return out;
}
