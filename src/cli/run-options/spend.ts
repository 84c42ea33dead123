/** `run`'s spend options: what a call costs, which answers are billed, and the most a run may spend. */
import { BreError } from '@bre-batch/core/errors';
import type { PipelinePrices } from '../../config/pipeline.js';
import { DEFAULT_BILLED, parseAmount, parseBilled, type Prices } from '../../limits/spend.js';
import { SERVICES, type ServiceName } from '@bre-batch/core/types';
import type { OptionFamily } from './family.js';

export interface SpendArgs {
  price?: string[];
  currency?: string;
  billed?: string;
  'max-spend'?: string;
}

export const SPEND_OPTIONS = {
  title: 'Spend:',
  options: {
    price: {
      type: 'string',
      array: true,
      defaultDescription: "the pipeline file's prices, else none",
      describe: `SERVICE=AMOUNT or workflow:NAME=AMOUNT, repeatable: what one call costs (SERVICE ${SERVICES.join(', ')}; NAME a workflow endpoint)`,
    },
    currency: {
      type: 'string',
      defaultDescription: "the pipeline file's, else none shown",
      describe: 'CODE: the currency of the prices (EUR, USD, INR), shown beside every amount',
    },
    billed: {
      type: 'string',
      defaultDescription: DEFAULT_BILLED.join(','),
      describe: 'OUTCOME[,OUTCOME...]: the answers a call is billed for, among 2xx, 4xx, 429, 5xx, timeout, network',
    },
    'max-spend': {
      type: 'string',
      describe:
        'AMOUNT: start no row that could take the folder past it; rows in flight finish; then exit 3, resumable (a new --max-spend replaces it)',
    },
  },
} as const satisfies OptionFamily;

export interface ResolvedSpend {
  /** Undefined: nothing priced. */
  readonly prices?: Prices;
  /** --max-spend in micro-units. */
  readonly maxSpendMicros?: number;
}

/** One --price: `bureau=0.20` or `workflow:bureau_mobile_bank_bre=0.08`. */
function parsePrice(
  text: string,
  service: Partial<Record<ServiceName, number>>,
  workflow: Record<string, number>,
): void {
  const m = /^(?:(workflow):([A-Za-z0-9_-]+)|([a-z]+))=(.*)$/.exec(text.trim());
  const svc = m?.[3];
  if (!m || (svc !== undefined && !(SERVICES as readonly string[]).includes(svc)))
    throw new BreError(
      'USAGE',
      `Expected --price to be SERVICE=AMOUNT (SERVICE ${SERVICES.join(', ')}) or workflow:NAME=AMOUNT, got '${text}'`,
      { field: 'price' },
    );
  const amount = parseAmount(m[4], '--price');
  if (m[2] !== undefined) workflow[m[2]] = amount;
  else service[svc as ServiceName] = amount;
}

export function resolveSpend(a: SpendArgs, file: PipelinePrices | undefined): ResolvedSpend {
  const service: Partial<Record<ServiceName, number>> = { ...file?.service };
  const workflow: Record<string, number> = { ...file?.workflow };
  for (const p of a.price ?? []) parsePrice(p, service, workflow);
  if (a.currency !== undefined && !/^[A-Za-z]{1,8}$/.test(a.currency))
    throw new BreError(
      'USAGE',
      `Expected --currency to be a currency code of letters (EUR, USD, INR), got '${a.currency}'`,
      {
        field: 'currency',
      },
    );
  const billed = a.billed !== undefined ? parseBilled(a.billed) : new Set(file?.billed ?? DEFAULT_BILLED);
  const maxSpendMicros = a['max-spend'] !== undefined ? parseAmount(a['max-spend'], '--max-spend') : undefined;
  const priced = Object.keys(service).length > 0 || Object.keys(workflow).length > 0;
  if (maxSpendMicros !== undefined && !priced)
    throw new BreError(
      'USAGE',
      `Expected a price with --max-spend (--price SERVICE=AMOUNT, or prices: in the pipeline file), got none: without one nothing is counted`,
      { field: 'max-spend' },
    );
  if (!priced) return {};
  return {
    prices: { currency: (a.currency ?? file?.currency ?? '').toUpperCase(), service, workflow, billed },
    ...(maxSpendMicros !== undefined ? { maxSpendMicros } : {}),
  };
}
