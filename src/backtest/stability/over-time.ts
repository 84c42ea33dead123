/**
 * Stability over time of one characteristic (an input column, a numeric result field): its values are counted
 * into fixed bins per period, and each period is compared with a baseline period by PSI (stats.ts). The
 * baseline is the first period with at least `minKeys` values (the first with any when none has that many):
 * the oldest vintage, as a risk team compares today's applicants with those the strategy was built on. Keys
 * without a date ("(missing)" period) are counted but are not a point in time, so they get no PSI.
 */
import { comparePeriods, MISSING_PERIOD } from '../period/period.js';
import { psi, psiBand, type PsiBand } from '../stats.js';

export interface PeriodPsi {
  readonly period: string;
  /** Values counted in the period (missing values included: they have their own bin). */
  readonly n: number;
  readonly small: boolean;
  /** Against the baseline; null for the baseline itself and for "(missing)". */
  readonly psi: number | null;
  readonly band: PsiBand | null;
}

export interface StabilityFigures {
  readonly name: string;
  /** input: an input column (CSI); a / b: a result field of run A / run B; a=b: both runs, identical counts. */
  readonly source: 'input' | 'a' | 'b' | 'a=b';
  readonly type: 'numeric' | 'categorical';
  readonly bins: number;
  readonly baseline: string | null;
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

  figures(name: string, source: StabilityFigures['source'], type: StabilityFigures['type'], minKeys: number): StabilityFigures {
    const order = [...this.counts.keys()].sort(comparePeriods);
    const total = (p: string): number => (this.counts.get(p) as Uint32Array).reduce((s, v) => s + v, 0);
    const dated = order.filter((p) => p !== MISSING_PERIOD);
    const baseline = dated.find((p) => total(p) >= minKeys) ?? dated.find((p) => total(p) > 0) ?? null;
    const base = baseline === null ? null : [...(this.counts.get(baseline) as Uint32Array)];
    const periods = order.map((period): PeriodPsi => {
      const n = total(period);
      const value = base === null || period === baseline || period === MISSING_PERIOD ? null : psi(base, [...(this.counts.get(period) as Uint32Array)]);
      return { period, n, small: n < minKeys, psi: value, band: psiBand(value) };
    });
    const comparable = periods.filter((p) => p.psi !== null);
    const latest = [...comparable].reverse().find((p) => !p.small) ?? null;
    const max = comparable.filter((p) => !p.small).reduce<PeriodPsi | null>((m, p) => (m === null || (p.psi as number) > (m.psi as number) ? p : m), null);
    return { name, source, type, bins: this.bins, baseline, periods, latest, max };
  }
}

/** The characteristics that moved most by their latest PSI, largest first (ties by name). */
export function topMovers(all: readonly StabilityFigures[], n = 10): StabilityFigures[] {
  return all.filter((s) => s.latest !== null)
    .sort((x, y) => (y.latest?.psi as number) - (x.latest?.psi as number) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .slice(0, n);
}
