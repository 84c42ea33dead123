/**
 * The report's spend (--price): the folder's total beside the rows, a table per service, and, beside the rate,
 * the spend over time (the folder's running total against the cap) from the time series.
 */
import { cells, table } from '@bre-batch/formats/page/html';
import { esc, fmtInt } from '@bre-batch/formats/page/svg';
import { formatAmount } from '../limits/spend.js';
import { timeChart, type Bucket, type Line, type Span } from './charts.js';

/** summary.json's `spend`, as the report reads it. */
export interface SpendFigures {
  readonly currency: string;
  readonly total: number;
  readonly thisSession: number;
  readonly cap: number | null;
  readonly billedOutcomes: readonly string[];
  readonly services: readonly { service: string; calls: number; spend: number }[];
}

// biome-ignore lint/suspicious/noExplicitAny: summary.json read loosely, as the rest of the report does.
export function spendFiguresOf(sp: any): SpendFigures | null {
  if (!sp || typeof sp.total !== 'number') return null;
  return {
    currency: String(sp.currency ?? ''),
    total: sp.total,
    thisSession: Number(sp.this_session ?? 0),
    cap: typeof sp.max_spend === 'number' ? sp.max_spend : null,
    billedOutcomes: Array.isArray(sp.billed_outcomes) ? sp.billed_outcomes.map(String) : [],
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    services: Object.entries<any>(sp.services ?? {}).map(([service, x]) => ({
      service,
      calls: Number(x?.calls_billed ?? 0),
      spend: Number(x?.spend ?? 0),
    })),
  };
}

export const money = (units: number, currency: string): string => formatAmount(Math.round(units * 1e6), currency);

/** The spend table, under the services' one; a merged folder's is every shard's, summed. */
export function spendTable(sp: SpendFigures, merged = false): string {
  const rows = sp.services.map((s) => cells([esc(s.service), fmtInt(s.calls), esc(money(s.spend, sp.currency))]));
  rows.push(cells(['<b>all</b>', '', `<b>${esc(money(sp.total, sp.currency))}</b>`]));
  const cap =
    sp.cap === null
      ? ''
      : ` --max-spend ${esc(money(sp.cap, sp.currency))}: ${esc(money(Math.max(0, sp.cap - sp.total), sp.currency))} left.`;
  const sessions = merged
    ? 'Every session of every shard, summed'
    : `Every session of the folder; ${esc(money(sp.thisSession, sp.currency))} in the last`;
  return `${table(['service', 'calls billed', 'spend'], rows)}<p class="note">${sessions}. Billed: ${esc(sp.billedOutcomes.join(', '))} answers.${cap}</p>`;
}

/** The folder's running spend over time against the cap, when the time series has it. */
export function spendChart(spans: readonly Span[], buckets: readonly Bucket[]): string {
  const mid = (b: Bucket) => (b.start + b.end) / 2;
  const last = (b: Bucket) => {
    // Shards' totals add up; a shard's last sample in the bucket is its total then.
    const by = new Map<string, { total: number; cap: number | null }>();
    for (const s of b.samples) if (s.spend) by.set(s.shard ?? '', s.spend);
    return by.size === 0 ? null : [...by.values()];
  };
  const points = buckets.map((b) => [mid(b), last(b)] as const);
  if (!points.some(([, v]) => v !== null)) return '';
  const currency = buckets.flatMap((b) => b.samples).find((s) => s.spend)?.spend?.currency ?? '';
  const lines: Line[] = [
    {
      name: 'spent',
      color: '#16a085',
      points: points.map(([t, v]) => [t, v ? v.reduce((a, x) => a + x.total, 0) : null] as const),
    },
  ];
  if (points.some(([, v]) => v?.some((x) => x.cap !== null)))
    lines.push({
      name: '--max-spend',
      color: '#c0392b',
      dashed: true,
      points: points.map(([t, v]) => [t, v?.find((x) => x.cap !== null)?.cap ?? null] as const),
    });
  return timeChart(
    `Spend so far (the folder's, every session)${currency ? `, ${currency}` : ''}`,
    currency || 'spend',
    spans,
    lines,
  );
}
