/**
 * Vintages: approvals, swaps and bad rates per application period, for A and B. Periods with fewer keys than
 * a threshold are marked `small` (their rates are noisy), never left out. O(periods) memory.
 */
import {
  approvalFigures,
  BadCounter,
  SegmentAccumulator,
  type ApprovalFigures,
  type BadRate,
  type Outcome,
} from '../comparison.js';
import type { SideView, SwapClass } from '../side.js';
import { comparePeriods } from '@bre-batch/formats/input/period';

/** Default --min-period-keys: below this many compared keys a period is marked small. */
export const DEFAULT_MIN_PERIOD_KEYS = 30;

export interface PeriodFigures {
  readonly period: string;
  readonly keys: number;
  /** Fewer keys than `min_keys`: shown, but read its rates with care. */
  readonly small: boolean;
  readonly approval: ApprovalFigures;
  readonly swap_in: number;
  readonly swap_out: number;
  /** Present when an outcome column was given. */
  readonly bad_rate_a_approved?: BadRate;
  readonly bad_rate_b_approved?: BadRate;
  readonly bad_rate_all?: BadRate;
}

export interface PeriodsFigures {
  readonly column: string;
  readonly unit: string;
  readonly min_keys: number;
  /** Chronological, "(missing)" (no date in the period column) last. */
  readonly periods: readonly PeriodFigures[];
}

class PeriodCounter {
  readonly seg = new SegmentAccumulator();
  readonly all = new BadCounter();
}

export class PeriodAccumulator {
  private readonly periods = new Map<string, PeriodCounter>();

  constructor(
    private readonly column: string,
    private readonly unit: string,
    private readonly minKeys: number,
    private readonly withOutcome: boolean,
  ) {}

  add(period: string, cls: SwapClass, a: SideView, b: SideView, outcome: Outcome | undefined): void {
    let p = this.periods.get(period);
    if (!p) {
      p = new PeriodCounter();
      this.periods.set(period, p);
    }
    p.seg.add(cls, a, b, outcome);
    p.all.add(outcome);
  }

  figures(): PeriodsFigures {
    const periods = [...this.periods.entries()]
      .sort((x, y) => comparePeriods(x[0], y[0]))
      .map(([period, p]): PeriodFigures => {
        const keys = p.seg.paired.n;
        return {
          period,
          keys,
          small: keys < this.minKeys,
          approval: approvalFigures(p.seg.paired.counts()),
          swap_in: p.seg.paired.bOnly,
          swap_out: p.seg.paired.aOnly,
          ...(this.withOutcome
            ? {
                bad_rate_a_approved: p.seg.badA.figures(),
                bad_rate_b_approved: p.seg.badB.figures(),
                bad_rate_all: p.all.figures(),
              }
            : {}),
        };
      });
    return { column: this.column, unit: this.unit, min_keys: this.minKeys, periods };
  }
}
