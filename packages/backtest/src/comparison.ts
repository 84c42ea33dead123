/**
 * Every figure of one comparison (stage X of run A against stage Y of run B) over the keys present exactly once
 * in both runs. Rows are added one at a time; memory is O(decision categories² + rules + feature bins +
 * segments), never O(rows). The amount changes needed for the histogram are handed to a sink (a temporary
 * file in the streaming join) because the bin edges depend on their range, known only at the end.
 */
import { FeatureAccumulator, type FeatureBins, type FeatureFigures } from './features.js';
import type { Histogram } from './histogram.js';
import { coverage } from './score/coverage.js';
import { sortCategories, swapClass, type SideView, type SwapClass } from './side.js';
import { newcombePaired, rate, type Interval, type PairedCounts, type Rate } from './stats.js';

/** Outcome of a row: 1 bad, 0 good, null unknown (column empty or not 0/1). */
export type Outcome = 0 | 1 | null;

export interface RowContext {
  readonly segment?: string;
  readonly outcome?: Outcome;
}

/** The 2×2 swap table of approvals (A approved × B approved), counted key by key. */
class Paired {
  bothYes = 0;
  aOnly = 0;
  bOnly = 0;
  bothNo = 0;

  add(cls: SwapClass): void {
    if (cls === 'both_approve') this.bothYes += 1;
    else if (cls === 'swap_out') this.aOnly += 1;
    else if (cls === 'swap_in') this.bOnly += 1;
    else this.bothNo += 1;
  }

  get n(): number {
    return this.bothYes + this.aOnly + this.bOnly + this.bothNo;
  }

  counts(): PairedCounts {
    return { bothYes: this.bothYes, aOnly: this.aOnly, bOnly: this.bOnly, bothNo: this.bothNo };
  }
}

export interface ApprovalFigures {
  readonly n: number;
  readonly a: Rate;
  readonly b: Rate;
  /** B − A, with Newcombe's paired 95% interval. */
  readonly difference: number | null;
  readonly difference_ci: Interval | null;
  readonly method: 'wilson; difference: newcombe paired (method 10)';
}

export function approvalFigures(p: PairedCounts): ApprovalFigures {
  const n = p.bothYes + p.aOnly + p.bOnly + p.bothNo;
  const diff = newcombePaired(p);
  return {
    n,
    a: rate(p.bothYes + p.aOnly, n),
    b: rate(p.bothYes + p.bOnly, n),
    difference: diff ? diff.difference : null,
    difference_ci: diff ? diff.ci : null,
    method: 'wilson; difference: newcombe paired (method 10)',
  };
}

/** Keys of a set, those with a known outcome, and the bad ones among them. */
export class BadCounter {
  rows = 0;
  known = 0;
  bad = 0;

  add(outcome: Outcome | undefined): void {
    this.rows += 1;
    if (outcome === 0 || outcome === 1) {
      this.known += 1;
      this.bad += outcome;
    }
  }

  figures(): BadRate {
    const r = rate(this.bad, this.known);
    return {
      rows: this.rows,
      known: this.known,
      bad: this.bad,
      bad_rate: r.rate,
      ci: r.ci,
      ...coverage(this.rows, this.known, this.bad),
    };
  }
}

export interface BadRate {
  /** Rows in the set; `known` of them have an outcome (0 or 1); `bad` of those are 1. */
  readonly rows: number;
  readonly known: number;
  readonly bad: number;
  readonly bad_rate: number | null;
  readonly ci: Interval | null;
  /** known / rows; `unknown` = rows − known. */
  readonly coverage: number | null;
  readonly unknown: number;
  /** The set's bad rate if every unknown outcome were good / were bad: the truth lies between. */
  readonly bad_rate_best: number | null;
  readonly bad_rate_worst: number | null;
}

const BAD_SETS = ['a_approved', 'b_approved', 'swap_in', 'swap_out', 'both_approve', 'both_reject', 'all'] as const;
export type BadSet = (typeof BAD_SETS)[number];

/** Approvals, swaps and the bad rates of each side's approved set, for a segment or a period. */
export class SegmentAccumulator {
  readonly paired = new Paired();
  readonly badA = new BadCounter();
  readonly badB = new BadCounter();

  add(cls: SwapClass, a: SideView, b: SideView, outcome: Outcome | undefined): void {
    this.paired.add(cls);
    if (a.approved) this.badA.add(outcome);
    if (b.approved) this.badB.add(outcome);
  }
}

export interface SegmentFigures {
  readonly segment: string;
  readonly approval: ApprovalFigures;
  readonly swap_in: number;
  readonly swap_out: number;
  /** Present when an outcome column was given. */
  readonly bad_rate_a_approved?: BadRate;
  readonly bad_rate_b_approved?: BadRate;
}

export interface RuleFigures {
  readonly rule: string;
  readonly a_failed: number;
  readonly b_failed: number;
  /** Over the rows where the stage ran on that side. */
  readonly a_rate: number | null;
  readonly b_rate: number | null;
  readonly difference: number | null;
  /** Keys where the rule fails in B but not in A, and the reverse (stage ran on both sides). */
  readonly newly_failing: number;
  readonly no_longer_failing: number;
}

export interface AmountFigures {
  /** Sum and mean of the amount over each side's approved keys that have one. */
  readonly a_total: number;
  readonly b_total: number;
  readonly total_change: number;
  readonly a_approved_with_amount: number;
  readonly b_approved_with_amount: number;
  readonly a_mean: number | null;
  readonly b_mean: number | null;
  /** Keys both approved with an amount on both sides: how the amount moved. */
  readonly both_approve: {
    readonly n: number;
    readonly increased: number;
    readonly decreased: number;
    readonly unchanged: number;
    readonly total_change: number;
    readonly mean_change: number | null;
    readonly min_change: number | null;
    readonly max_change: number | null;
  };
  /** New money (B's amounts on swap-ins) and money no longer lent (A's amounts on swap-outs). */
  readonly swap_in_total: number;
  readonly swap_out_total: number;
  readonly histogram: Histogram | null;
}

export interface OfferFigures {
  /** Keys where the stage ran on both sides and both report an offer count. */
  readonly n: number;
  readonly a_offers: number;
  readonly b_offers: number;
  readonly more: number;
  readonly fewer: number;
  readonly same: number;
  readonly best_offer: {
    readonly a_total: number;
    readonly b_total: number;
    readonly paired_n: number;
    readonly mean_change: number | null;
  };
}

export interface DecisionFigures {
  readonly categories: readonly string[];
  readonly a: Readonly<Record<string, number>>;
  readonly b: Readonly<Record<string, number>>;
  /** crosstab[i][j]: keys with A's decision categories[i] and B's categories[j]. */
  readonly crosstab: readonly (readonly number[])[];
}

export interface ComparisonFigures {
  readonly label: string;
  readonly stage_a: string;
  readonly stage_b: string;
  /** Matched keys (present exactly once in each run). */
  readonly n: number;
  /** Matched keys where the stage ran on each side (not skipped, present). */
  readonly ran_a: number;
  readonly ran_b: number;
  /** null for a stage without decisions (e.g. bureau features): only features are compared. */
  readonly decisions: DecisionFigures | null;
  readonly approval: ApprovalFigures | null;
  readonly swaps: {
    readonly swap_in: number;
    readonly swap_out: number;
    readonly both_approve: number;
    readonly both_reject: number;
    readonly net: number;
  } | null;
  readonly amounts: AmountFigures | null;
  /** null when no result on either side has an offer (offers_count > 0 or a best offer amount). */
  readonly offers: OfferFigures | null;
  readonly rules: readonly RuleFigures[];
  readonly features: readonly FeatureFigures[];
  /** Features seen in B's results that A never had (no bins to compare against). */
  readonly features_only_in_b: readonly string[];
  readonly bad_rates: Readonly<Record<BadSet, BadRate>> | null;
  readonly segments: readonly SegmentFigures[] | null;
}

export interface ComparisonSetup {
  readonly label: string;
  readonly stageA: string;
  readonly stageB: string;
  /** Whether decisions are compared (a workflow stage on either side). */
  readonly decisions: boolean;
  /** Feature name -> bins (from A's sample). */
  readonly featureBins: ReadonlyMap<string, FeatureBins>;
  readonly withOutcome: boolean;
  readonly withSegments: boolean;
}

export class ComparisonAccumulator {
  private n = 0;
  private ranA = 0;
  private ranB = 0;
  private readonly cross = new Map<string, Map<string, number>>();
  private readonly paired = new Paired();
  private readonly rules = new Map<string, { a: number; b: number; newly: number; gone: number }>();
  private readonly features = new Map<string, FeatureAccumulator>();
  private readonly onlyB = new Set<string>();
  private readonly bad = new Map<BadSet, BadCounter>(BAD_SETS.map((s) => [s, new BadCounter()]));
  private readonly segments = new Map<string, SegmentAccumulator>();
  private readonly amt = {
    aTotal: 0,
    bTotal: 0,
    aCount: 0,
    bCount: 0,
    n: 0,
    up: 0,
    down: 0,
    same: 0,
    sum: 0,
    min: Infinity,
    max: -Infinity,
    swapIn: 0,
    swapOut: 0,
  };
  private readonly off = {
    n: 0,
    a: 0,
    b: 0,
    more: 0,
    fewer: 0,
    same: 0,
    boA: 0,
    boB: 0,
    boN: 0,
    boSum: 0,
    seen: false,
  };

  /**
   * @param onChange receives every non-zero-or-zero amount change B − A of a key both approved (for the histogram).
   */
  constructor(
    readonly setup: ComparisonSetup,
    private readonly onChange: (delta: number) => void = () => {},
  ) {
    for (const [name, bins] of setup.featureBins) this.features.set(name, new FeatureAccumulator(name, bins));
  }

  /** Adds one matched key; returns its swap class (null for a features-only comparison). */
  add(a: SideView, b: SideView, ctx: RowContext = {}): SwapClass | null {
    this.n += 1;
    if (a.ran) this.ranA += 1;
    if (b.ran) this.ranB += 1;
    this.addRules(a, b);
    this.addFeatures(a, b);
    if (!this.setup.decisions) return null;

    const row = this.cross.get(a.category) ?? new Map<string, number>();
    row.set(b.category, (row.get(b.category) ?? 0) + 1);
    this.cross.set(a.category, row);
    const cls = swapClass(a, b);
    this.paired.add(cls);
    this.addAmounts(cls, a, b);
    this.addOffers(a, b);
    if (this.setup.withOutcome) this.addBad(cls, a, b, ctx.outcome);
    if (this.setup.withSegments) {
      const key = ctx.segment ?? '(missing)';
      const seg = this.segments.get(key) ?? new SegmentAccumulator();
      seg.add(cls, a, b, ctx.outcome);
      this.segments.set(key, seg);
    }
    return cls;
  }

  private addRules(a: SideView, b: SideView): void {
    const setA = new Set(a.rulesFailed);
    const setB = new Set(b.rulesFailed);
    for (const r of new Set([...setA, ...setB])) {
      const e = this.rules.get(r) ?? { a: 0, b: 0, newly: 0, gone: 0 };
      const inA = setA.has(r);
      const inB = setB.has(r);
      if (inA) e.a += 1;
      if (inB) e.b += 1;
      if (a.ran && b.ran) {
        if (inB && !inA) e.newly += 1;
        if (inA && !inB) e.gone += 1;
      }
      this.rules.set(r, e);
    }
  }

  private addFeatures(a: SideView, b: SideView): void {
    for (const acc of this.features.values()) acc.add(a.features[acc.feature], b.features[acc.feature], a.ran, b.ran);
    for (const name of Object.keys(b.features)) if (!this.features.has(name)) this.onlyB.add(name);
  }

  private addAmounts(cls: SwapClass, a: SideView, b: SideView): void {
    const m = this.amt;
    if (a.approved && a.amount !== null) {
      m.aTotal += a.amount;
      m.aCount += 1;
    }
    if (b.approved && b.amount !== null) {
      m.bTotal += b.amount;
      m.bCount += 1;
    }
    if (cls === 'swap_in' && b.amount !== null) m.swapIn += b.amount;
    if (cls === 'swap_out' && a.amount !== null) m.swapOut += a.amount;
    if (cls === 'both_approve' && a.amount !== null && b.amount !== null) {
      const d = b.amount - a.amount;
      m.n += 1;
      m.sum += d;
      if (d > 1e-9) m.up += 1;
      else if (d < -1e-9) m.down += 1;
      else m.same += 1;
      if (d < m.min) m.min = d;
      if (d > m.max) m.max = d;
      this.onChange(d);
    }
  }

  private addOffers(a: SideView, b: SideView): void {
    const o = this.off;
    // A payday workflow reports offers_count 0 on every row: the section is for results that carry offers.
    if (
      (a.offersCount ?? 0) > 0 ||
      (b.offersCount ?? 0) > 0 ||
      a.bestOfferAmount !== null ||
      b.bestOfferAmount !== null
    )
      o.seen = true;
    if (a.ran && b.ran && a.offersCount !== null && b.offersCount !== null) {
      o.n += 1;
      o.a += a.offersCount;
      o.b += b.offersCount;
      if (b.offersCount > a.offersCount) o.more += 1;
      else if (b.offersCount < a.offersCount) o.fewer += 1;
      else o.same += 1;
    }
    if (a.bestOfferAmount !== null) o.boA += a.bestOfferAmount;
    if (b.bestOfferAmount !== null) o.boB += b.bestOfferAmount;
    if (a.bestOfferAmount !== null && b.bestOfferAmount !== null) {
      o.boN += 1;
      o.boSum += b.bestOfferAmount - a.bestOfferAmount;
    }
  }

  private addBad(cls: SwapClass, a: SideView, b: SideView, outcome: Outcome | undefined): void {
    const bump = (s: BadSet): void => (this.bad.get(s) as BadCounter).add(outcome);
    bump('all');
    bump(cls);
    if (a.approved) bump('a_approved');
    if (b.approved) bump('b_approved');
  }

  /** Minimum and maximum amount change seen, for the histogram's edges (null when none). */
  changeRange(): { min: number; max: number } | null {
    return this.amt.n > 0 ? { min: this.amt.min, max: this.amt.max } : null;
  }

  figures(histogram: Histogram | null = null): ComparisonFigures {
    const s = this.setup;
    const base = {
      label: s.label,
      stage_a: s.stageA,
      stage_b: s.stageB,
      n: this.n,
      ran_a: this.ranA,
      ran_b: this.ranB,
      rules: this.ruleFigures(),
      features: [...this.features.values()]
        .map((f) => f.figures())
        .sort((x, y) => (y.psi ?? -1) - (x.psi ?? -1) || (x.feature < y.feature ? -1 : 1)),
      features_only_in_b: [...this.onlyB].sort(),
    };
    if (!s.decisions) {
      return {
        ...base,
        decisions: null,
        approval: null,
        swaps: null,
        amounts: null,
        offers: null,
        bad_rates: null,
        segments: null,
      };
    }
    const p = this.paired;
    return {
      ...base,
      decisions: this.decisionFigures(),
      approval: approvalFigures(p.counts()),
      swaps: {
        swap_in: p.bOnly,
        swap_out: p.aOnly,
        both_approve: p.bothYes,
        both_reject: p.bothNo,
        net: p.bOnly - p.aOnly,
      },
      amounts: this.amountFigures(histogram),
      offers: this.offerFigures(),
      bad_rates: s.withOutcome
        ? (Object.fromEntries(BAD_SETS.map((k) => [k, (this.bad.get(k) as BadCounter).figures()])) as Record<
            BadSet,
            BadRate
          >)
        : null,
      segments: s.withSegments ? this.segmentFigures() : null,
    };
  }

  private decisionFigures(): DecisionFigures {
    const all: string[] = [];
    const a: Record<string, number> = {};
    const b: Record<string, number> = {};
    for (const [ca, row] of this.cross) {
      all.push(ca);
      for (const [cb, count] of row) {
        all.push(cb);
        a[ca] = (a[ca] ?? 0) + count;
        b[cb] = (b[cb] ?? 0) + count;
      }
    }
    const categories = sortCategories(all);
    for (const c of categories) {
      a[c] ??= 0;
      b[c] ??= 0;
    }
    const crosstab = categories.map((ca) => categories.map((cb) => this.cross.get(ca)?.get(cb) ?? 0));
    return { categories, a: ordered(a, categories), b: ordered(b, categories), crosstab };
  }

  private amountFigures(histogram: Histogram | null): AmountFigures {
    const m = this.amt;
    return {
      a_total: m.aTotal,
      b_total: m.bTotal,
      total_change: m.bTotal - m.aTotal,
      a_approved_with_amount: m.aCount,
      b_approved_with_amount: m.bCount,
      a_mean: m.aCount > 0 ? m.aTotal / m.aCount : null,
      b_mean: m.bCount > 0 ? m.bTotal / m.bCount : null,
      both_approve: {
        n: m.n,
        increased: m.up,
        decreased: m.down,
        unchanged: m.same,
        total_change: m.sum,
        mean_change: m.n > 0 ? m.sum / m.n : null,
        min_change: m.n > 0 ? m.min : null,
        max_change: m.n > 0 ? m.max : null,
      },
      swap_in_total: m.swapIn,
      swap_out_total: m.swapOut,
      histogram,
    };
  }

  private offerFigures(): OfferFigures | null {
    const o = this.off;
    if (!o.seen) return null;
    return {
      n: o.n,
      a_offers: o.a,
      b_offers: o.b,
      more: o.more,
      fewer: o.fewer,
      same: o.same,
      best_offer: { a_total: o.boA, b_total: o.boB, paired_n: o.boN, mean_change: o.boN > 0 ? o.boSum / o.boN : null },
    };
  }

  private ruleFigures(): RuleFigures[] {
    const out: RuleFigures[] = [];
    for (const [rule, e] of this.rules) {
      const ar = this.ranA > 0 ? e.a / this.ranA : null;
      const br = this.ranB > 0 ? e.b / this.ranB : null;
      out.push({
        rule,
        a_failed: e.a,
        b_failed: e.b,
        a_rate: ar,
        b_rate: br,
        difference: ar !== null && br !== null ? br - ar : null,
        newly_failing: e.newly,
        no_longer_failing: e.gone,
      });
    }
    return out.sort((x, y) => Math.abs(y.difference ?? 0) - Math.abs(x.difference ?? 0) || (x.rule < y.rule ? -1 : 1));
  }

  private segmentFigures(): SegmentFigures[] {
    const out: SegmentFigures[] = [];
    for (const [segment, acc] of this.segments) {
      const p = acc.paired;
      out.push({
        segment,
        approval: approvalFigures(p.counts()),
        swap_in: p.bOnly,
        swap_out: p.aOnly,
        ...(this.setup.withOutcome
          ? { bad_rate_a_approved: acc.badA.figures(), bad_rate_b_approved: acc.badB.figures() }
          : {}),
      });
    }
    return out.sort((x, y) => y.approval.n - x.approval.n || (x.segment < y.segment ? -1 : 1));
  }
}

function ordered(rec: Record<string, number>, keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = rec[k] ?? 0;
  return out;
}
