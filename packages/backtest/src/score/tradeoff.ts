/**
 * The cut-off trade-off of one score: for approval rates of 5%, 10%, ..., 100% of the scored keys, the cut-off
 * that approves the best-scored keys and the bad rate of that approved set. The cut-off for a target rate p is
 * the score of the ⌈p·N⌉-th best key, and every key scoring at least as well is approved, so a tie at the
 * cut-off is never split: the actual approval rate can exceed the target and is reported.
 */
import { rawValue, type Direction, type ScoreTable } from './table.js';

const TRADEOFF_STEP_PCT = 5;

export interface TradeoffRow {
  /** Target approval rate (0.05 .. 1). */
  readonly target: number;
  /** Approve keys with a score at or above this (at or below when lower is better). */
  readonly cutoff: number;
  readonly approved: number;
  readonly approval_rate: number;
  readonly good: number;
  readonly bad: number;
  readonly unknown: number;
  /** bad / (good + bad) of the approved set; null when no outcome in it is known. */
  readonly bad_rate: number | null;
}

/** On the oriented table (higher = better); empty when no key is scored. */
export function tradeoff(t: ScoreTable, direction: Direction, stepPct = TRADEOFF_STEP_PCT): TradeoffRow[] {
  const total = t.nGood + t.nBad + t.nUnknown;
  if (total === 0) return [];
  const rows: TradeoffRow[] = [];
  let k = t.values.length - 1;
  let approved = t.good[k] + t.bad[k] + t.unknown[k];
  let good = t.good[k];
  let bad = t.bad[k];
  for (let pct = stepPct; pct <= 100; pct += stepPct) {
    const need = Math.ceil((pct * total) / 100);
    while (approved < need) {
      k -= 1;
      approved += t.good[k] + t.bad[k] + t.unknown[k];
      good += t.good[k];
      bad += t.bad[k];
    }
    rows.push({
      target: pct / 100,
      cutoff: rawValue(t.values[k], direction),
      approved,
      approval_rate: approved / total,
      good,
      bad,
      unknown: approved - good - bad,
      bad_rate: good + bad > 0 ? bad / (good + bad) : null,
    });
  }
  return rows;
}
