/**
 * Score power of each --score over the compared keys of one comparison, streamed: during the join every key's
 * scores (A and B), outcome and approvals go to a temporary file of fixed-width records (8 bytes a value); after
 * the join, each table is built from one pass over that file (the scores of one side and outcome class are
 * loaded into a typed array, sorted and folded into the table of distinct values, then dropped), and a last
 * pass adds every key to the paired DeLong covariance. Peak memory: 8 bytes per scored key of one side while
 * its table is built, plus O(distinct values); never the results.
 */
import type { Outcome } from '../comparison.js';
import { NumberSink } from '../files.js';
import type { Json } from '@bre-batch/core/types';
import { aucFigures, PairedDelong, type AucFigures, type PairedAucFigures } from './auc.js';
import { decileFigures, ivBand, type DecileRow, type IvBand } from './deciles.js';
import { ksFigures, type KsFigures } from './ks.js';
import { forEachRecord } from './records.js';
import { scoreValue, type ScoreSpec } from './spec.js';
import { orient, oriented, tableFromSorted, type Direction, type ScoreTable } from './table.js';
import { tradeoff, type TradeoffRow } from './tradeoff.js';

interface ClassCounts {
  readonly keys: number;
  readonly good: number;
  readonly bad: number;
  readonly unknown: number;
}

/** Where a strategy's decisions put it on a score's trade-off chart (over the keys with that score). */
interface OperatingPoint {
  readonly approved: number;
  readonly approval_rate: number | null;
  readonly good: number;
  readonly bad: number;
  readonly unknown: number;
  readonly bad_rate: number | null;
}

export interface ScoreSideFigures {
  readonly field: string;
  /** Keys with a number in this field, by outcome. */
  readonly scored: ClassCounts;
  /** Keys without a number (field absent, null, not a number, stage not run), by outcome: left out of the figures. */
  readonly missing: ClassCounts;
  /**
   * Keys whose value is a no-score marker (`--score-missing`, e.g. -1: no credit history), by outcome and by
   * marker: left out of the figures (deciles, cut-off table, power), not ranked as the lowest score.
   */
  readonly no_score: ClassCounts & { readonly markers: readonly ({ readonly value: number } & ClassCounts)[] };
  readonly distinct_values: number;
  /** AUC, Gini and their DeLong 95% intervals over the scored keys with a known outcome; null without goods or bads. */
  readonly power: AucFigures | null;
  readonly ks: KsFigures | null;
  readonly iv: number | null;
  readonly iv_band: IvBand | null;
  readonly decile_edges: readonly number[];
  readonly deciles: readonly DecileRow[];
  readonly tradeoff: readonly TradeoffRow[];
  /** The approval decisions of A and of B over this side's scored keys; null for a comparison without decisions. */
  readonly operating_points: { readonly a: OperatingPoint; readonly b: OperatingPoint } | null;
}

export interface ScoreFigures {
  readonly label: string;
  readonly field_a: string;
  readonly field_b: string;
  readonly direction: Direction;
  /** Compared keys. */
  readonly keys: number;
  /** Keys whose A and B values differ (a missing value on one side only counts as different). */
  readonly keys_differing: number;
  readonly a: ScoreSideFigures;
  readonly b: ScoreSideFigures;
  /** DeLong test of AUC_B − AUC_A over keys with both scores and a known outcome; null without goods or bads there. */
  readonly paired: PairedAucFigures | null;
}

const APPROVED_A = 1;
const APPROVED_B = 2;

function numberOf(v: Json | undefined): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : Number.NaN;
}

class Tally {
  keys = 0;
  good = 0;
  bad = 0;
  unknown = 0;

  add(outcome: number): void {
    this.keys += 1;
    if (outcome === 0) this.good += 1;
    else if (outcome === 1) this.bad += 1;
    else this.unknown += 1;
  }

  counts(): ClassCounts {
    return { keys: this.keys, good: this.good, bad: this.bad, unknown: this.unknown };
  }
}

class Point {
  readonly tally = new Tally();

  figures(of: number): OperatingPoint {
    const t = this.tally;
    return {
      approved: t.keys,
      approval_rate: of > 0 ? t.keys / of : null,
      good: t.good,
      bad: t.bad,
      unknown: t.unknown,
      bad_rate: t.good + t.bad > 0 ? t.bad / (t.good + t.bad) : null,
    };
  }
}

class SideState {
  readonly scored = new Tally();
  readonly missing = new Tally();
  readonly noScore = new Tally();
  readonly byMarker = new Map<number, Tally>();
  readonly pointA = new Point();
  readonly pointB = new Point();
}

export class ScoreCollector {
  private readonly sink: NumberSink;
  /** Per record: A and B value of each score, then outcome (0, 1, NaN) and the approval flags. */
  private readonly width: number;
  private readonly rec: Float64Array;
  private readonly sides: { a: SideState; b: SideState }[];
  private readonly differing: number[];
  private keys = 0;

  constructor(
    readonly specs: readonly ScoreSpec[],
    readonly path: string,
    private readonly decisions: boolean,
  ) {
    this.sink = new NumberSink(path);
    this.width = 2 * specs.length + 2;
    this.rec = new Float64Array(this.width);
    this.sides = specs.map(() => ({ a: new SideState(), b: new SideState() }));
    this.differing = specs.map(() => 0);
  }

  /**
   * Adds one compared key: its result fields on each side (empty when the stage did not run there), outcome
   * and approvals. Returns the A and B values of each score for compare.csv (null when missing).
   */
  add(
    fieldsA: Readonly<Record<string, Json>>,
    fieldsB: Readonly<Record<string, Json>>,
    outcome: Outcome | undefined,
    approvedA: boolean,
    approvedB: boolean,
  ): (number | null)[] {
    this.keys += 1;
    const o = outcome === 0 || outcome === 1 ? outcome : Number.NaN;
    const cells: (number | null)[] = [];
    this.specs.forEach((s, i) => {
      // compare.csv shows the values as they are (a marker too); the figures take the scores only.
      const rawA = numberOf(fieldsA[s.fieldA]);
      const rawB = numberOf(fieldsB[s.fieldB]);
      const a = scoreValue(rawA, s);
      const b = scoreValue(rawB, s);
      this.rec[2 * i] = a;
      this.rec[2 * i + 1] = b;
      cells.push(Number.isNaN(rawA) ? null : rawA, Number.isNaN(rawB) ? null : rawB);
      if (!(rawA === rawB || (Number.isNaN(rawA) && Number.isNaN(rawB)))) this.differing[i] += 1;
      const st = this.sides[i];
      for (const [side, v, raw] of [
        [st.a, a, rawA],
        [st.b, b, rawB],
      ] as const) {
        if (Number.isNaN(v)) {
          if (Number.isNaN(raw)) side.missing.add(o);
          else {
            side.noScore.add(o);
            let t = side.byMarker.get(raw);
            if (!t) side.byMarker.set(raw, (t = new Tally()));
            t.add(o);
          }
          continue;
        }
        side.scored.add(o);
        if (approvedA) side.pointA.tally.add(o);
        if (approvedB) side.pointB.tally.add(o);
      }
    });
    this.rec[this.width - 2] = o;
    this.rec[this.width - 1] = (approvedA ? APPROVED_A : 0) | (approvedB ? APPROVED_B : 0);
    for (let k = 0; k < this.width; k += 1) this.sink.push(this.rec[k]);
    return cells;
  }

  close(): void {
    this.sink.close();
  }

  figures(): ScoreFigures[] {
    return this.specs.map((s, i) => {
      const st = this.sides[i];
      return {
        label: s.label,
        field_a: s.fieldA,
        field_b: s.fieldB,
        direction: s.direction,
        keys: this.keys,
        keys_differing: this.differing[i],
        a: this.sideFigures(
          s.fieldA,
          s.direction,
          st.a,
          this.table(2 * i, st.a.scored, () => true),
        ),
        b: this.sideFigures(
          s.fieldB,
          s.direction,
          st.b,
          this.table(2 * i + 1, st.b.scored, () => true),
        ),
        paired: this.paired(i, s.direction),
      };
    });
  }

  /**
   * Table of column `col` over the records `keep` accepts (their value in `col` being a number), of the raw
   * values or, with `direction`, oriented (built oriented, not copied: a score can have a value per key).
   */
  private table(
    col: number,
    counts: { good: number; bad: number; unknown: number },
    keep: (buf: Float64Array, at: number) => boolean,
    direction: Direction = 'higher_is_better',
  ): ScoreTable {
    const arrays = [new Float64Array(counts.good), new Float64Array(counts.bad), new Float64Array(counts.unknown)];
    const fill = [0, 0, 0];
    const oc = this.width - 2;
    forEachRecord(this.path, this.width, (buf, at) => {
      const v = buf[at + col];
      if (Number.isNaN(v) || !keep(buf, at)) return;
      const o = buf[at + oc];
      const c = o === 0 ? 0 : o === 1 ? 1 : 2;
      arrays[c][fill[c]] = orient(v, direction);
      fill[c] += 1;
    });
    return tableFromSorted(
      arrays[0].subarray(0, fill[0]).sort(),
      arrays[1].subarray(0, fill[1]).sort(),
      arrays[2].subarray(0, fill[2]).sort(),
    );
  }

  private sideFigures(field: string, direction: Direction, st: SideState, raw: ScoreTable): ScoreSideFigures {
    const o = oriented(raw, direction);
    const dec = decileFigures(raw, direction);
    const scored = st.scored.keys;
    return {
      field,
      scored: st.scored.counts(),
      missing: st.missing.counts(),
      no_score: {
        ...st.noScore.counts(),
        markers: [...st.byMarker].sort((x, y) => x[0] - y[0]).map(([value, t]) => ({ value, ...t.counts() })),
      },
      distinct_values: raw.values.length,
      power: aucFigures(o),
      ks: ksFigures(raw),
      iv: dec.iv,
      iv_band: ivBand(dec.iv),
      decile_edges: dec.edges,
      deciles: dec.rows,
      tradeoff: tradeoff(o, direction),
      operating_points: this.decisions ? { a: st.pointA.figures(scored), b: st.pointB.figures(scored) } : null,
    };
  }

  /** Paired DeLong over the keys with both scores and a known outcome. */
  private paired(i: number, direction: Direction): PairedAucFigures | null {
    const ca = 2 * i;
    const cb = 2 * i + 1;
    const oc = this.width - 2;
    const both = (buf: Float64Array, at: number): boolean =>
      !Number.isNaN(buf[at + ca]) && !Number.isNaN(buf[at + cb]) && !Number.isNaN(buf[at + oc]);
    let good = 0;
    let bad = 0;
    forEachRecord(this.path, this.width, (buf, at) => {
      if (!both(buf, at)) return;
      if (buf[at + oc] === 0) good += 1;
      else bad += 1;
    });
    const counts = { good, bad, unknown: 0 };
    const ta = this.table(ca, counts, both, direction);
    const tb = this.table(cb, counts, both, direction);
    const test = new PairedDelong(ta, tb);
    forEachRecord(this.path, this.width, (buf, at) => {
      if (both(buf, at))
        test.add(orient(buf[at + ca], direction), orient(buf[at + cb], direction), buf[at + oc] as 0 | 1);
    });
    return test.result();
  }
}
