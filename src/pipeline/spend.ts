/**
 * A run's spend (../limits/spend.ts): the meter, made from the prices and the folder's earlier sessions
 * (../output/spend-file.ts), what the run says of it when it opens, and the stop at --max-spend.
 */
import { BreError } from '@bre-batch/core/errors';
import type { Log } from '../log/logger.js';
import { formatAmount, priceOf, SpendMeter, sumMicros, toUnits } from '../limits/spend.js';
import type { RunSummary } from '@bre-batch/formats';
import { SERVICES } from '@bre-batch/core/types';
import { readSpendHistory, SpendFile, type SpendHistory } from '../output/spend-file.js';
import { kindOf } from '../stages/index.js';
import type { RunSettings, SpendSettings } from './settings.js';

/** What the spend reads: the prices, the cap and the pipeline's stages. */
type SpendOf = SpendSettings & Pick<RunSettings, 'pipeline'>;

/** What a row costs at most without retries: each priced stage called once. */
function rowMicrosOf(s: SpendOf): number {
  if (!s.prices) return 0;
  const prices = s.prices;
  return s.pipeline.stages.reduce((sum, st) => sum + priceOf(prices, kindOf(st).service, st.endpoint), 0);
}

/**
 * `--plan`'s spend: the rows left at each stage's price (a stage that polls, as many calls as it declares), and,
 * when the folder has earlier sessions, what their rows really cost (retries, a 5xx billed) as a range from the
 * cheapest session's rate to the dearest's, the estimate at all of them together.
 */
export function planSpend(s: SpendOf, rows: number, dir: string): string[] {
  if (!s.prices) return [];
  const prices = s.prices;
  const cur = prices.currency;
  // Estimates to the cent (the unit's hundredth): the price's own decimals would claim a precision they lack.
  const est = (micros: number) => formatAmount(Math.round(micros / 10_000) * 10_000, cur);
  const base = s.pipeline.stages.reduce(
    (sum, st) => sum + priceOf(prices, kindOf(st).service, st.endpoint) * (kindOf(st).callsPerRow?.(st) ?? 1),
    0,
  );
  const history = readSpendHistory(dir);
  const spent = sumMicros(history.before);
  const sessions = history.sessions.filter((x) => x.rows > 0);
  const nominal = rows * base;
  let estimate = nominal;
  let line: string;
  if (sessions.length === 0 || base === 0) {
    line = `  spend: about ${est(nominal)} (${rows.toLocaleString('en-US')} rows at ${formatAmount(base, cur)} a row, every stage called once; no earlier session in the folder to take a retry share from, so retries and billed failures come on top)`;
  } else {
    const perRow = sessions.map((x) => x.micros / x.rows);
    const pooled = sessions.reduce((a, x) => a + x.micros, 0) / sessions.reduce((a, x) => a + x.rows, 0);
    estimate = rows * pooled;
    const share = (r: number) => `${Math.round((r / base - 1) * 1000) / 10}%`;
    const lo = Math.min(...perRow);
    const hi = Math.max(...perRow);
    line = `  spend: about ${est(estimate)}, from ${est(rows * lo)} to ${est(rows * hi)} (${rows.toLocaleString('en-US')} rows at ${formatAmount(base, cur)} a row, plus the retry share of the folder's ${sessions.length} earlier session${sessions.length === 1 ? '' : 's'}: ${share(lo)} to ${share(hi)})`;
  }
  const lines = [line];
  if (spent > 0) lines.push(`  spent so far in this folder: ${formatAmount(spent, cur)}`);
  const cap = s.maxSpendMicros;
  if (cap !== undefined) {
    const left = Math.max(0, cap - spent);
    lines.push(
      spent + estimate <= cap
        ? `  --max-spend ${formatAmount(cap, cur)}: fits, about ${est(left - estimate)} to spare`
        : `  --max-spend ${formatAmount(cap, cur)}: leaves ${formatAmount(left, cur)}, about ${Math.floor((left / Math.max(1, estimate)) * rows).toLocaleString('en-US')} of the rows; the run stops there (exit 3, resumable)`,
    );
  }
  return lines;
}

/** The price of each call of a stage (0: not priced). */
export function stagePrice(s: Pick<SpendSettings, 'prices'>, stage: RunSettings['pipeline']['stages'][number]): number {
  return s.prices ? priceOf(s.prices, kindOf(stage).service, stage.endpoint) : 0;
}

/**
 * The meter of a run into a folder (its file opened, its earlier sessions read) or of one without a folder
 * (a job's scratch folder is still one). Undefined when nothing is priced.
 */
export function openSpend(
  s: SpendOf,
  dir: string,
  x: { readonly rows: () => number; readonly fail: (err: Error) => void; readonly log: Log },
): { meter: SpendMeter; file: SpendFile } | undefined {
  if (!s.prices) return undefined;
  const history = readSpendHistory(dir);
  const spentBefore = sumMicros(history.before);
  if (spentBefore > 0 && history.currency !== undefined && history.currency !== s.prices.currency)
    throw new BreError(
      'USAGE',
      `Expected --currency ${history.currency || '(none)'} for ${dir}: its earlier sessions' spend is in ${history.currency || 'no currency'}, got ${s.prices.currency || 'none'}`,
      { field: 'currency' },
    );
  const meter = new SpendMeter(s.prices, history.before, s.maxSpendMicros, rowMicrosOf(s));
  const file = SpendFile.open(dir, meter, history, x.rows, x.fail);
  if (spentBefore > 0) x.log(resumeLine(meter, history));
  return { meter, file };
}

/** What a resumed folder has spent, and what its cap leaves. */
function resumeLine(meter: SpendMeter, history: SpendHistory): string {
  const cur = meter.prices.currency;
  const spent = sumMicros(history.before);
  const calls = history.before.billed.workflow + history.before.billed.bureau + history.before.billed.account;
  const cap = meter.capMicros;
  const left =
    cap === undefined
      ? 'no --max-spend'
      : `--max-spend ${formatAmount(cap, cur)} leaves ${formatAmount(Math.max(0, cap - spent), cur)}`;
  return `spend: this folder's earlier sessions spent ${formatAmount(spent, cur)} (${calls} calls billed); ${left}`;
}

/** The stop at --max-spend: what was spent, what the rows in flight may still add, how to go on. */
export function spendCapStop(meter: SpendMeter): BreError {
  const cur = meter.prices.currency;
  const m = (micros: number) => formatAmount(micros, cur);
  const inFlight = `${meter.rowsInFlight} rows in flight (up to ${m(meter.rowsInFlight * meter.rowMicros)} more, retries aside)`;
  const rest =
    'Calls already sent finish; rows still waiting for their turn or a retry are left to the resume, unsent. No row was written to errors for it. Re-run the same command with a higher --max-spend to go on (it resumes)';
  if (meter.jobCapMicros !== undefined)
    return new BreError(
      'SPEND_CAP',
      `stopping at the job's --max-spend ${m(meter.jobCapMicros)}: the job has none of it left to grant this worker for another row (up to ${m(meter.rowMicros)}); this worker spent ${m(meter.totalMicros)} and has ${inFlight}. ${rest}; the new cap is the whole job's`,
    );
  return new BreError(
    'SPEND_CAP',
    `stopping at --max-spend ${m(meter.capMicros ?? 0)}: ${m(meter.totalMicros)} spent and ${inFlight}: the next row (up to ${m(meter.rowMicros)}) could pass it. ${rest}`,
  );
}

/** summary.json's `spend`. */
export function spendSummary(meter: SpendMeter): NonNullable<RunSummary['spend']> {
  const p = meter.prices;
  const prices: Record<string, number> = {};
  for (const svc of SERVICES) if (p.service[svc] !== undefined) prices[svc] = toUnits(p.service[svc]!);
  for (const [name, v] of Object.entries(p.workflow)) prices[`workflow:${name}`] = toUnits(v);
  const services: NonNullable<RunSummary['spend']>['services'] = {};
  for (const svc of SERVICES) {
    const now = meter.session;
    if (now.attempts[svc] === 0 && meter.before.billed[svc] === 0) continue;
    services[svc] = {
      calls_billed: meter.before.billed[svc] + now.billed[svc],
      calls_billed_this_session: now.billed[svc],
      attempts_this_session: now.attempts[svc],
      spend: toUnits(meter.before.micros[svc] + now.micros[svc]),
      spend_this_session: toUnits(now.micros[svc]),
    };
  }
  const cap = meter.capMicros;
  return {
    currency: p.currency,
    billed_outcomes: [...p.billed],
    prices,
    total: toUnits(meter.totalMicros),
    this_session: toUnits(meter.sessionMicros),
    max_spend: cap === undefined ? null : toUnits(cap),
    left: cap === undefined ? null : toUnits(Math.max(0, cap - meter.totalMicros)),
    services,
  };
}
