/**
 * What calls cost: the prices (per service, per workflow endpoint), which answers are billed (the billing rule)
 * and the run's spend, counted attempt by attempt (../http/layers/measure.ts) and checked against --max-spend
 * before a row starts (../pipeline/feed.ts). Amounts are kept as whole micro-units (a millionth of the
 * currency's unit), so a night of millions of calls adds up without a rounding drift.
 */
import { BreError } from '@bre-batch/core/errors';
import { perService, SERVICES, type ServiceName } from '@bre-batch/core/types';

/** How an attempt ended, as the billing rule sees it. */
export const BILLING_OUTCOMES = ['2xx', '4xx', '429', '5xx', 'timeout', 'network'] as const;
export type BillingOutcome = (typeof BILLING_OUTCOMES)[number];

/**
 * The default rule. A 2xx is billed. A 5xx and a time-out are too: the spec does not say, the vendor's
 * workflow ran (its 500 is "input holds unexpected values", decision spec section 7) or may have run (an
 * attempt cut by its time-out or by a stop reached the server), and a cap must not count less than the bill.
 * 4xx answers (401, 403, 422) and 429 are refusals at the gate, before any work: not billed; nor is a
 * connection that failed before an answer (`network`).
 */
export const DEFAULT_BILLED: readonly BillingOutcome[] = ['2xx', '5xx', 'timeout'];

const MICROS = 1_000_000;

export interface Prices {
  /** ISO 4217-like code (EUR, USD, INR), or the word given. */
  readonly currency: string;
  /** Micro-units per call; a service without a price costs nothing. */
  readonly service: Readonly<Partial<Record<ServiceName, number>>>;
  /** Per workflow endpoint, micro-units per call; overrides the workflow service's price. */
  readonly workflow: Readonly<Record<string, number>>;
  /** The outcomes billed (DEFAULT_BILLED unless --billed or the pipeline file's `billed` says). */
  readonly billed: ReadonlySet<BillingOutcome>;
}

/** An amount as typed ("0.05", "12", "1.5e-3" refused) in micro-units; `what` names the option for the message. */
export function parseAmount(text: string, what: string): number {
  const t = text.trim();
  if (!/^\d+(\.\d{1,6})?$/.test(t))
    throw new BreError(
      'USAGE',
      `Expected ${what} to be an amount of money (e.g. 0.05 or 12; at most 6 decimals, no currency sign), got '${text}'`,
      { field: what },
    );
  const [whole, frac = ''] = t.split('.');
  const micros = Number(whole) * MICROS + Number(frac.padEnd(6, '0'));
  if (!Number.isSafeInteger(micros)) throw new BreError('USAGE', `Expected ${what} to be below 9e9, got '${text}'`);
  return micros;
}

/** An amount for people: at least two decimals, more when the price has them ("0.0125 EUR", "12.50 EUR"). */
export function formatAmount(micros: number, currency: string): string {
  const sign = micros < 0 ? '-' : '';
  const m = Math.abs(Math.round(micros));
  const whole = Math.floor(m / MICROS);
  const frac = String(m % MICROS)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `${sign}${whole}.${frac}${currency ? ` ${currency}` : ''}`;
}

/** Micro-units as a number of the currency's unit (summary.json, metrics). */
export function toUnits(micros: number): number {
  return Math.round(micros) / MICROS;
}

/** The outcome of an answer's status, or of an attempt that got none (an error code in lower case). */
export function outcomeOf(status: number | string): BillingOutcome {
  if (typeof status === 'number') {
    if (status === 429) return '429';
    if (status >= 500) return '5xx';
    if (status >= 400) return '4xx';
    return '2xx';
  }
  // Cut by its time-out or abandoned by a stop after it left: the server may have run it.
  if (status === 'timeout' || status === 'interrupted') return 'timeout';
  return 'network';
}

/** `--billed 2xx,5xx,timeout`: the outcomes a call is billed for. */
export function parseBilled(text: string, what = '--billed'): Set<BillingOutcome> {
  const out = new Set<BillingOutcome>();
  for (const part of text.split(',').map((p) => p.trim().toLowerCase())) {
    if (part === '') continue;
    if (!(BILLING_OUTCOMES as readonly string[]).includes(part))
      throw new BreError(
        'USAGE',
        `Expected ${what} to list outcomes among ${BILLING_OUTCOMES.join(', ')} (comma-separated), got '${part}'`,
        { field: what },
      );
    out.add(part as BillingOutcome);
  }
  return out;
}

/** A stage's price per call: its workflow endpoint's when it has one, else its service's (0: not priced). */
export function priceOf(prices: Prices, service: ServiceName, endpoint: string | undefined): number {
  if (service === 'workflow' && endpoint !== undefined && prices.workflow[endpoint] !== undefined)
    return prices.workflow[endpoint];
  return prices.service[service] ?? 0;
}

/** Counts per service: calls billed, their amount, and attempts whatever their outcome. */
export interface SpendCounts {
  readonly billed: Record<ServiceName, number>;
  readonly micros: Record<ServiceName, number>;
  readonly attempts: Record<ServiceName, number>;
}

export function emptyCounts(): SpendCounts {
  return { billed: perService(() => 0), micros: perService(() => 0), attempts: perService(() => 0) };
}

/** Adds `from`'s counts into `into`, service by service. */
export function addCounts(into: SpendCounts, from: SpendCounts): void {
  for (const svc of SERVICES) {
    into.billed[svc] += from.billed[svc];
    into.micros[svc] += from.micros[svc];
    into.attempts[svc] += from.attempts[svc];
  }
}

export function sumMicros(c: SpendCounts): number {
  return c.micros.workflow + c.micros.bureau + c.micros.account;
}

/**
 * The run's spend: this session's attempts as they start and end, the folder's earlier sessions (read back from
 * its spend file, ../output/spend-file.ts) and the cap. An attempt counts as `pending` from its start to its
 * outcome; one a kill cut there is counted billed by the next session (the server may have run it).
 */
export class SpendMeter {
  readonly session = emptyCounts();
  /** Attempts started and not yet ended, and their price, per service. */
  readonly pending = perService(() => 0);
  readonly pendingMicros = perService(() => 0);
  /** Rows started under the cap and not ended yet, and what each may cost (its stages' prices). */
  rowsInFlight = 0;
  /** Told after every change of the counts (the spend file writes them with the next journal lines). */
  onChange: (() => void) | undefined;
  /**
   * A job's worker: asks the job for more of its cap (raising `capMicros`); false when none is left. Undefined:
   * the cap is this folder's own.
   */
  topUp: (() => Promise<boolean>) | undefined;
  /** A job's worker: the job's cap (its own `capMicros` is its share of it), for what the stop says. */
  jobCapMicros: number | undefined;

  constructor(
    readonly prices: Prices,
    /** The folder's earlier sessions, summed. */
    readonly before: SpendCounts,
    /** --max-spend in micro-units; undefined: no cap. */
    public capMicros: number | undefined,
    /** What one row may cost at most without retries: every priced stage once. */
    readonly rowMicros: number,
  ) {}

  start(service: ServiceName, price: number): void {
    this.pending[service] += 1;
    this.pendingMicros[service] += price;
    this.session.attempts[service] += 1;
    this.onChange?.();
  }

  end(service: ServiceName, price: number, status: number | string): void {
    this.pending[service] -= 1;
    this.pendingMicros[service] -= price;
    if (this.prices.billed.has(outcomeOf(status))) {
      this.session.billed[service] += 1;
      this.session.micros[service] += price;
    }
    this.onChange?.();
  }

  /** This session's spend, attempts still in flight not counted. */
  get sessionMicros(): number {
    return sumMicros(this.session);
  }

  /** The whole folder's spend: earlier sessions and this one. */
  get totalMicros(): number {
    return sumMicros(this.before) + this.sessionMicros;
  }

  /** Spent and in flight (an attempt in flight may yet be billed). */
  get committedMicros(): number {
    return this.totalMicros + this.pendingMicros.workflow + this.pendingMicros.bureau + this.pendingMicros.account;
  }

  /**
   * Whether one more row may start: what is spent, what the rows in flight may still cost (each its whole
   * price, counted from the start: an over-estimate while they run) and this row must fit under the cap.
   */
  admits(): boolean {
    if (this.capMicros === undefined) return true;
    return this.totalMicros + (this.rowsInFlight + 1) * this.rowMicros <= this.capMicros;
  }

  /** Whether one more row may start, after asking a job for more of its cap when the meter has a top-up. */
  async admitsAfterTopUp(): Promise<boolean> {
    while (!this.admits()) if (!this.topUp || !(await this.topUp())) return false;
    return true;
  }
}
