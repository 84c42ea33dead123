/**
 * What a merged folder's calls cost: every shard's spend summed per service, from each shard's spend file
 * (./spend-file.ts: every session of the shard, the attempts a kill cut counted billed), not from its
 * summary.json, which an unfinished or killed shard may lack or hold from an earlier session. Amounts of
 * different currencies are never added: shards priced in two currencies get no merged spend, and the merge
 * says so. The prices and the billing rule are the shards' summaries'; where they differ the sum is still
 * right (each shard's calls at its own prices) and the merge says which differ.
 */
import { SERVICES } from '@bre-batch/core/types';
import type { MergedSummary, RunSummary } from '@bre-batch/formats';
import { addCounts, emptyCounts, formatAmount, sumMicros, toUnits } from '../limits/spend.js';
import { readSpendHistory, type SpendHistory } from './spend-file.js';

interface SpendShard {
  readonly dir: string;
  /** `K/N`. */
  readonly shard: string;
  readonly summary: RunSummary | undefined;
}

export interface MergedSpend {
  /** summary.json's `spend`; undefined when no shard priced a call or their currencies differ. */
  readonly summary: MergedSummary['spend'];
  /** The merged folder's spend file (undefined: none is written, a resume starts from nothing). */
  readonly history: (SpendHistory & { readonly currency: string }) | undefined;
  /** What the merge says of the spend (stderr and its closing lines): currencies, prices, rules that differ. */
  readonly notes: readonly string[];
}

export function mergeSpend(shards: readonly SpendShard[]): MergedSpend {
  const read = shards.map((s) => ({ ...s, history: readSpendHistory(s.dir) }));
  const priced = read.filter((s) => s.history.currency !== undefined);
  if (priced.length === 0) return { summary: undefined, history: undefined, notes: [] };
  const notes: string[] = [];
  const byCurrency = new Map<string, string[]>();
  for (const s of priced)
    byCurrency.set(s.history.currency!, [...(byCurrency.get(s.history.currency!) ?? []), s.shard]);
  if (byCurrency.size > 1) {
    const each = [...byCurrency].map(([c, sh]) => `${c || '(no currency)'} in ${sh.join(', ')}`).join('; ');
    notes.push(
      `not summed: the shards priced their calls in different currencies (${each}); each shard's summary.json has its own spend`,
    );
    return { summary: undefined, history: undefined, notes };
  }
  const currency = priced[0].history.currency!;
  const unpriced = read.filter((s) => s.history.currency === undefined).map((s) => s.shard);
  if (unpriced.length > 0)
    notes.push(`shard${unpriced.length > 1 ? 's' : ''} ${unpriced.join(', ')} priced no call: not in the spend`);

  const before = emptyCounts();
  for (const s of priced) addCounts(before, s.history.before);

  const prices: Record<string, number> = {};
  const differ = new Set<string>();
  let billed: readonly string[] | undefined;
  for (const s of priced) {
    const sp = s.summary?.spend;
    if (!sp) continue;
    for (const [k, v] of Object.entries(sp.prices)) {
      if (prices[k] === undefined) prices[k] = v;
      else if (prices[k] !== v) differ.add(k);
    }
    if (billed === undefined) billed = sp.billed_outcomes;
    else if ([...billed].sort().join() !== [...sp.billed_outcomes].sort().join())
      notes.push(
        `the shards billed by different rules (${billed.join(', ')} in one, ${sp.billed_outcomes.join(', ')} in ${s.shard}): each shard's calls are counted by its own`,
      );
  }
  if (differ.size > 0)
    notes.push(
      `the shards' prices differ (${[...differ].join(', ')}; summary.json's prices are the first shard's): each shard's calls are counted at its own prices`,
    );

  const services: NonNullable<MergedSummary['spend']>['services'] = {};
  for (const svc of SERVICES) {
    if (before.billed[svc] === 0 && before.attempts[svc] === 0) continue;
    services[svc] = {
      calls_billed: before.billed[svc],
      calls_billed_this_session: 0,
      attempts_this_session: 0,
      spend: toUnits(before.micros[svc]),
      spend_this_session: 0,
    };
  }
  return {
    summary: {
      currency,
      billed_outcomes: [...(billed ?? [])],
      prices,
      total: toUnits(sumMicros(before)),
      // The merge made no call; each shard's cap was its own.
      this_session: 0,
      max_spend: null,
      left: null,
      services,
    },
    history: { currency, before, sessions: priced.flatMap((s) => s.history.sessions) },
    notes,
  };
}

/** The merge's closing line of the spend: `spend: 12.30 EUR over all shards (workflow 246 calls billed, 12.30 EUR)`. */
export function mergedSpendLine(sp: NonNullable<MergedSummary['spend']>): string {
  const money = (units: number) => formatAmount(Math.round(units * 1e6), sp.currency);
  const parts = SERVICES.flatMap((svc) => {
    const s = sp.services[svc];
    return s ? [`${svc} ${s.calls_billed} calls billed, ${money(s.spend)}`] : [];
  });
  return `  spend: ${money(sp.total)} over all shards (${parts.join('; ') || 'no call billed'})`;
}
