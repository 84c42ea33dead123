/**
 * Stability over time of one characteristic (an input column, a numeric result field): its values are counted
 * into fixed bins per period, and each later period is compared with a baseline (the oldest periods holding a
 * quarter of the dated values, never the last) by PSI (stats.ts), with the PSI's noise on small counts beside it
 * and the top movers ranked by PSI minus noise (why: docs/decisions/stability-baseline.md). Keys without a date
 * ("(missing)" period) are counted but get no PSI.
 */
import { comparePeriods, MISSING_PERIOD } from '@bre-batch/formats/input/period';
import { psi, psiBand, type PsiBand } from '../stats.js';
import { chi2Sf } from './chi2.js';

/** Share of the dated values the baseline holds at least. */
const BASELINE_SHARE = 0.25;

interface PeriodPsi {
  readonly period: string;
  /** Values counted in the period (missing values included: they have their own bin). */
  readonly n: number;
  readonly small: boolean;
  /** Part of the baseline. */
  readonly baseline: boolean;
  /** Against the baseline; null for the baseline's periods and for "(missing)". */
  readonly psi: number | null;
  readonly band: PsiBand | null;
  /** The PSI expected from sampling alone if nothing moved: (k − 1)·(1/n_baseline + 1/n), k = bins with a value. */
  readonly noise: number | null;
  /** P(a PSI this large between two samples of an unchanged population), χ² approximation; null with `psi`. */
  readonly p_value: number | null;
}

export interface StabilityFigures {
  readonly name: string;
  /** input: an input column (CSI); a / b: a result field of run A / run B; a=b: both runs, identical counts. */
  readonly source: 'input' | 'a' | 'b' | 'a=b';
  readonly type: 'numeric' | 'categorical';
  readonly bins: number;
  /** The baseline's periods ("2024-07 to 2024-12"); null when no period has a value. */
  readonly baseline: string | null;
  readonly baseline_periods: readonly string[];
  readonly baseline_n: number;
  readonly periods: readonly PeriodPsi[];
  /** The last period that is not small, against the baseline: what the top-movers table ranks by. */
  readonly latest: PeriodPsi | null;
  /** The period furthest from the baseline. */
  readonly max: PeriodPsi | null;
}

export class OverTime {
  private readonly counts = new Map<string, Uint32Array>();

  constructor(readonly bins: number) {}

  add(period: string, bin: number): void {
    let c = this.counts.get(period);
    if (!c) {
      c = new Uint32Array(this.bins);
      this.counts.set(period, c);
    }
    c[bin] += 1;
  }

  /** Same counts in every period (two runs with the same values need not be listed twice). */
  sameAs(other: OverTime): boolean {
    if (other.counts.size !== this.counts.size) return false;
    for (const [p, c] of this.counts) {
      const d = other.counts.get(p);
      if (!d || d.length !== c.length || c.some((v, i) => v !== d[i])) return false;
    }
    return true;
  }

  figures(
    name: string,
    source: StabilityFigures['source'],
    type: StabilityFigures['type'],
    minKeys: number,
  ): StabilityFigures {
    const order = [...this.counts.keys()].sort(comparePeriods);
    const total = (p: string): number => (this.counts.get(p) as Uint32Array).reduce((s, v) => s + v, 0);
    const dated = order.filter((p) => p !== MISSING_PERIOD);
    const need = Math.max(minKeys, Math.ceil(dated.reduce((s, p) => s + total(p), 0) * BASELINE_SHARE));
    const pooled: string[] = [];
    let nBase = 0;
    for (const p of dated) {
      if (nBase >= need || (pooled.length > 0 && pooled.length === dated.length - 1)) break;
      pooled.push(p);
      nBase += total(p);
    }
    const inBase = new Set(pooled);
    const base = nBase === 0 ? null : new Array<number>(this.bins).fill(0);
    if (base)
      for (const p of pooled)
        (this.counts.get(p) as Uint32Array).forEach((v, i) => {
          base[i] += v;
        });
    const periods = order.map((period): PeriodPsi => {
      const n = total(period);
      const counts = [...(this.counts.get(period) as Uint32Array)];
      const value = base === null || inBase.has(period) || period === MISSING_PERIOD ? null : psi(base, counts);
      const k = base === null ? 0 : counts.filter((c, i) => c > 0 || base[i] > 0).length;
      const scale = 1 / nBase + 1 / n;
      const usable = value !== null && n > 0;
      return {
        period,
        n,
        small: n < minKeys,
        baseline: inBase.has(period),
        psi: value,
        band: psiBand(value),
        noise: usable ? (k - 1) * scale : null,
        p_value: usable ? chi2Sf((value as number) / scale, k - 1) : null,
      };
    });
    const baseline =
      base === null ? null : pooled.length === 1 ? pooled[0] : `${pooled[0]} to ${pooled[pooled.length - 1]}`;
    const comparable = periods.filter((p) => p.psi !== null);
    const latest = [...comparable].reverse().find((p) => !p.small) ?? null;
    const max = comparable
      .filter((p) => !p.small)
      .reduce<PeriodPsi | null>((m, p) => (m === null || (p.psi as number) > (m.psi as number) ? p : m), null);
    return {
      name,
      source,
      type,
      bins: this.bins,
      baseline,
      baseline_periods: base ? pooled : [],
      baseline_n: base ? nBase : 0,
      periods,
      latest,
      max,
    };
  }
}

/** A row of the top-movers table: a characteristic whose distribution moved most since the baseline period. */
export interface Mover {
  readonly name: string;
  readonly source: StabilityFigures['source'];
  /** The comparison whose result field it is; null for an input column. */
  readonly comparison: string | null;
  readonly baseline: string | null;
  readonly period: string;
  readonly psi: number;
  readonly band: PsiBand | null;
  readonly noise: number | null;
  readonly p_value: number | null;
}

/** How far the latest PSI stands above what sampling alone gives. */
function excess(s: StabilityFigures): number {
  return (s.latest?.psi ?? 0) - (s.latest?.noise ?? 0);
}

/** The characteristics that moved most: latest PSI minus its noise, largest first (ties by name); a PSI of 0 is no move. */
export function topMovers(all: readonly StabilityFigures[], n = 10): StabilityFigures[] {
  return all
    .filter((s) => s.latest !== null && (s.latest.psi as number) > 0)
    .sort((x, y) => excess(y) - excess(x) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .slice(0, n);
}
