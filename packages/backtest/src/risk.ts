/**
 * The credit-risk figures of one comparison, beside the decision figures of comparison.ts: score power
 * (--score with --outcome), vintages (--period) and the stability of numeric result fields over periods.
 * Fed key by key from the join; each part keeps O(periods × bins + distinct score values) in memory, the
 * scores' per-key records go to a temporary file (score/collector.ts).
 */
import type { Outcome } from './comparison.js';
import type { FeatureBins } from './features.js';
import { PeriodAccumulator, type PeriodsFigures } from './period/periods.js';
import type { PeriodUnit } from '@bre-batch/formats/input/period';
import { ScoreCollector, type ScoreFigures } from './score/collector.js';
import type { ScoreSpec } from './score/spec.js';
import type { SideView, SwapClass } from './side.js';
import { FieldStability } from './stability/fields.js';
import type { StabilityFigures } from './stability/over-time.js';
import type { Json } from '@bre-batch/core/types';

export interface PeriodOptions {
  readonly column: string;
  readonly unit: PeriodUnit;
  readonly minKeys: number;
}

export interface RiskSetup {
  readonly scores: readonly ScoreSpec[];
  readonly period?: PeriodOptions;
  readonly withOutcome: boolean;
  readonly decisions: boolean;
  readonly featureBins: ReadonlyMap<string, FeatureBins>;
  /** Temporary file for the score records. */
  readonly scorePath: string;
}

export interface RiskFigures {
  /** One per --score that applies to this comparison; null without --score. */
  readonly scores: readonly ScoreFigures[] | null;
  /** null without --period or for a comparison without decisions. */
  readonly periods: PeriodsFigures | null;
  /** PSI of every numeric result field, each period against the baseline period; null without --period. */
  readonly stability: readonly StabilityFigures[] | null;
}

const NONE: Readonly<Record<string, Json>> = {};

export class RiskAccumulator {
  private readonly scores: ScoreCollector | null;
  private readonly periods: PeriodAccumulator | null;
  private readonly fields: FieldStability | null;

  constructor(readonly setup: RiskSetup) {
    this.scores = setup.scores.length > 0 ? new ScoreCollector(setup.scores, setup.scorePath, setup.decisions) : null;
    const p = setup.period;
    this.periods = p && setup.decisions ? new PeriodAccumulator(p.column, p.unit, p.minKeys, setup.withOutcome) : null;
    this.fields = p ? new FieldStability(setup.featureBins) : null;
  }

  /** One compared key (cls null for a comparison without decisions); returns the score cells for compare.csv. */
  add(
    a: SideView,
    b: SideView,
    cls: SwapClass | null,
    outcome: Outcome | undefined,
    period: string | undefined,
  ): (number | null)[] {
    if (this.periods && cls !== null && period !== undefined) this.periods.add(period, cls, a, b, outcome);
    if (this.fields && period !== undefined) this.fields.add(period, a.features, b.features, a.ran, b.ran);
    return this.scores
      ? this.scores.add(a.ran ? a.features : NONE, b.ran ? b.features : NONE, outcome, a.approved, b.approved)
      : [];
  }

  close(): void {
    this.scores?.close();
  }

  figures(): RiskFigures {
    return {
      scores: this.scores ? this.scores.figures() : null,
      periods: this.periods ? this.periods.figures() : null,
      stability: this.fields && this.setup.period ? this.fields.figures(this.setup.period.minKeys) : null,
    };
  }
}

/** compare.csv cells of the scores for a key not compared (only in one run, duplicate): what that side has. */
export function scoreCells(specs: readonly ScoreSpec[], a: SideView | null, b: SideView | null): (number | null)[] {
  const num = (v: Json | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return specs.flatMap((s) => [num(a?.features[s.fieldA]), num(b?.features[s.fieldB])]);
}
