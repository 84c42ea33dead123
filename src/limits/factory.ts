/** Which limiter a service gets: what a run asks for, and the local answer (`--redis` has its own, ./redis.ts). */
import type { ServiceName } from '@bre-batch/core/types';
import { AdaptiveLimiter } from './adaptive.js';
import type { ServiceLimiter } from './limiter.js';
import { PacedLimiter } from './paced.js';
import { DEFAULT_RATES, type Rate } from '@bre-batch/core/rates';

/** What a run needs of one service's limiter. */
export interface LimiterRequest {
  readonly service: ServiceName;
  /** null: no rate limit, only the cap on calls in flight. */
  readonly rate: Rate | null;
  /** Most attempts in flight. */
  readonly concurrency: number;
  /** How late an unanswered call is taken to reach the server (default PATH_SLACK_MS, ./pacer.ts); local limiters only. */
  readonly rateSlackMs?: number;
  /** Per-attempt time-out, ms: a shared limiter's reserved slot must outlive an attempt. */
  readonly timeoutMs: number;
  /** Whether the pipeline calls the service at all (an unused service has no budget to share). */
  readonly used: boolean;
  /** The API client id (a shared budget belongs to one client). */
  readonly clientId: string;
  /** The source address the limiter's calls leave from (--local-address): the limits are per address. */
  readonly address?: string;
  /** Where a human-readable note goes (stderr). */
  readonly log: (line: string) => void;
}

export type LimiterFactory = (request: LimiterRequest) => Promise<ServiceLimiter>;

/** In-process limiters: paced (./paced.ts) with or without a rate, adaptive for account at its default rate. */
export async function localLimiter(r: LimiterRequest): Promise<ServiceLimiter> {
  const slack = r.rateSlackMs === undefined ? {} : { pathMs: r.rateSlackMs };
  const base = { service: r.service, rate: r.rate, concurrency: r.concurrency, slack };
  // The account limit is undocumented: adapt, unless the user set one explicitly and it is not the default.
  if (r.rate && r.service === 'account' && r.rate === DEFAULT_RATES.account)
    return new AdaptiveLimiter({ ...base, rate: r.rate });
  return new PacedLimiter(base);
}
