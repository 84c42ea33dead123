/** `run`'s limits and network options: rates, concurrency, time-outs, attempts, a shared limiter, source addresses. */
import { isIP } from 'node:net';
import { BreError } from '@bre-batch/core/errors';
import { parseByteSize, parseDuration, parseServiceDurations, resolveRates } from '@bre-batch/core/units';
import { defaultConcurrency } from '../../limits/limiter.js';
import { PATH_SLACK_MS } from '../../limits/pacer.js';
import type { Rate } from '@bre-batch/core/rates';
import { perService, SERVICES, type ServiceName } from '@bre-batch/core/types';
import { wholeNumber, type OptionFamily, type OptionsContext } from './family.js';

export interface LimitsArgs {
  rate?: string[];
  'rate-slack': string;
  concurrency?: unknown;
  timeout?: string[];
  'max-attempts': unknown;
  'throttle-deadline': string;
  'max-response-size': string;
  redis?: string;
  'local-address'?: string[];
}

/**
 * Whole-attempt time-outs (src/http/deadlines.ts). Bureau: 30 s, the documented example client (decision spec section 8); workflows
 * may fetch a bureau report themselves, so they get 60 s; account fetches: 60 s.
 */
const DEFAULT_TIMEOUTS_MS: Readonly<Record<ServiceName, number>> = {
  workflow: 60_000,
  bureau: 30_000,
  account: 60_000,
};

export const LIMITS_OPTIONS = {
  title: 'Limits and network:',
  options: {
    rate: {
      type: 'string',
      array: true,
      defaultDescription: 'workflow=500/min, bureau=1000/min, account=120/min adaptive',
      describe: `SERVICE=N/UNIT (UNIT s or min), SERVICE=off or off, repeatable; SERVICE ${SERVICES.join(', ')}`,
    },
    'rate-slack': {
      type: 'string',
      default: `${PATH_SLACK_MS}ms`,
      describe:
        'how late a call whose answer has not come back is taken to reach the server after it left (the answer bounds it when sooner); raise it on a path that can hold a request longer',
    },
    concurrency: {
      requiresArg: true,
      defaultDescription: 'rate x time-out x 1.25',
      describe: "N: most calls in flight per service; below it they follow the answers' latency (rate x latency)",
    },
    timeout: {
      type: 'string',
      array: true,
      defaultDescription: 'workflow=60s, bureau=30s, account=60s',
      describe:
        'SERVICE=DURATION: the most one attempt may take, connecting, headers and body together; past it the attempt is cut and retried as a time-out',
    },
    'max-attempts': {
      requiresArg: true,
      default: 6,
      describe:
        'N: attempts per call (5xx 502-504, network errors, time-outs) before the row goes to errors; 429s are not counted (the row waits for the service)',
    },
    'throttle-deadline': {
      type: 'string',
      default: '10m',
      describe:
        'how long a service may answer nothing but 429s before the run stops (exit 3, resumable; no row goes to errors for it)',
    },
    'max-response-size': {
      type: 'string',
      default: '16MiB',
      describe:
        'an answer longer than this is cut while it streams (RESPONSE_TOO_LARGE): memory stays bounded whatever a server sends',
    },
    redis: {
      type: 'string',
      describe: 'redis://host:port: share each service limiter with other workers on the same egress IP',
    },
    'local-address': {
      type: 'string',
      array: true,
      defaultDescription: "env BRE_LOCAL_ADDRESSES, else the system's choice",
      describe:
        'ADDR[,ADDR...], repeatable: calls leave from these source addresses, each with its own full limits; rows go to the address free soonest',
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedLimits {
  readonly rates: Record<ServiceName, Rate | null>;
  readonly rateSlackMs: number;
  readonly concurrency: Record<ServiceName, number>;
  readonly timeoutsMs: Record<ServiceName, number>;
  readonly maxAttempts: number;
  readonly throttleDeadlineMs: number;
  readonly maxResponseBytes: number;
  readonly redisUrl?: string;
  readonly localAddresses?: string[];
}

/**
 * --local-address, repeatable or comma-separated, else BRE_LOCAL_ADDRESSES (commas or spaces): IP literals,
 * each once. Undefined when neither is given.
 */
function parseLocalAddresses(option: readonly string[] | undefined, env: string | undefined): string[] | undefined {
  const given = option && option.length > 0 ? option.join(',') : env;
  if (given === undefined || given.trim() === '') return undefined;
  const out: string[] = [];
  for (const a of given.split(/[\s,]+/).filter((x) => x !== '')) {
    if (isIP(a) === 0)
      throw new BreError(
        'USAGE',
        `Expected --local-address to be an IP address of this machine (e.g. 10.0.0.5), got '${a}'`,
      );
    if (!out.includes(a)) out.push(a);
  }
  return out;
}

export function resolveLimits(a: LimitsArgs, ctx: Pick<OptionsContext, 'env'>): ResolvedLimits {
  const rates = resolveRates(a.rate);
  const rateSlackMs = parseDuration(a['rate-slack'], { flag: 'rate-slack', unit: 'ms' });
  const timeoutsMs = parseServiceDurations(a.timeout, 'timeout', DEFAULT_TIMEOUTS_MS);
  const given = a.concurrency === undefined ? undefined : wholeNumber('concurrency', a.concurrency, { min: 1 });
  const maxAttempts = wholeNumber('max-attempts', a['max-attempts'], { min: 1 });
  const throttleDeadlineMs = parseDuration(a['throttle-deadline'], { flag: 'throttle-deadline', unit: 's', min: 1000 });
  const maxResponseBytes = parseByteSize(a['max-response-size'], 'max-response-size', 1024);
  const localAddresses = parseLocalAddresses(a['local-address'], ctx.env.BRE_LOCAL_ADDRESSES);
  return {
    rates,
    rateSlackMs,
    concurrency: perService((s) => given ?? defaultConcurrency(rates[s], timeoutsMs[s])),
    timeoutsMs,
    maxAttempts,
    throttleDeadlineMs,
    maxResponseBytes,
    ...(a.redis !== undefined ? { redisUrl: a.redis } : {}),
    ...(localAddresses ? { localAddresses } : {}),
  };
}
