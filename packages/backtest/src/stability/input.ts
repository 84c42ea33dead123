/**
 * Characteristic stability (CSI) of the input columns over time: has the applicant population changed since
 * the baseline period? Bins come from a uniform sample of the input (taken while the input columns are read
 * for the join), then a second pass over the input counts every row per period and bin.
 *
 * Left out, and listed as such: the key, outcome and period columns (the period column moves by definition),
 * personal data (names, PAN, phone, address, date of birth...: a bin label would show their values), nested
 * values, and identifier-like text columns (more than half the sampled values distinct: lead ids, user ids).
 */
import { maskCategory } from '@bre-batch/formats/input/mask';
import { readRows } from '@bre-batch/formats/input/read';
import type { InputRow, Json } from '@bre-batch/core/types';
import { binLabels, binOf, featureBins, Reservoir, type FeatureBins } from '../features.js';
import type { InputReading, RowColumns } from '../input-columns.js';
import { OverTime, type StabilityFigures } from './over-time.js';

/** Why a column is not assessed. */
export type SkipReason = 'key' | 'outcome' | 'period' | 'personal data' | 'nested values' | 'identifier-like';

export interface InputStabilityFigures {
  readonly rows: number;
  readonly columns: readonly StabilityFigures[];
  readonly skipped: readonly { readonly column: string; readonly reason: SkipReason }[];
}

/** Distinct share of a text column's sampled values above which it is an identifier, not a characteristic. */
const IDENTIFIER_SHARE = 0.5;

function scalar(v: unknown): Json | undefined {
  if (v === undefined || v === null) return null;
  if (typeof v === 'object') return undefined;
  if (typeof v === 'string') return v.trim() === '' ? null : v.trim();
  return v as Json;
}

/** CSV gives text: a column whose every present sampled value is a number is numeric. */
function asNumberIfNumeric(v: Json, numeric: boolean): Json {
  if (!numeric || v === null) return v;
  return typeof v === 'number' ? v : Number(v);
}

function isNumeric(v: Json): boolean {
  return typeof v === 'number' ? Number.isFinite(v) : typeof v === 'string' && v !== '' && Number.isFinite(Number(v));
}

interface Column {
  readonly name: string;
  readonly numeric: boolean;
  readonly bins: FeatureBins;
  readonly over: OverTime;
}

export class InputStability {
  private readonly sample: Reservoir<Record<string, Json>>;
  private readonly seen = new Set<string>();
  private readonly skip = new Map<string, SkipReason>();
  private columns: Column[] = [];

  constructor(
    fixed: { readonly key?: string; readonly outcome?: string; readonly period: string },
    sampleSize: number,
  ) {
    this.sample = new Reservoir(sampleSize);
    if (fixed.key) this.skip.set(fixed.key, 'key');
    if (fixed.outcome) this.skip.set(fixed.outcome, 'outcome');
    this.skip.set(fixed.period, 'period');
  }

  /** Pass 1 (with the input columns): sample the rows. */
  offer(row: InputRow): void {
    for (const k of Object.keys(row.data)) this.seen.add(k);
    const slot = this.sample.offer();
    if (slot < 0) return;
    const rec: Record<string, Json> = {};
    for (const [k, v] of Object.entries(row.data)) {
      const s = scalar(v);
      rec[k] = s === undefined ? { nested: true } : s;
    }
    this.sample.put(slot, rec);
  }

  /** After pass 1: bins per column. */
  private prepare(): void {
    const items = this.sample.items;
    for (const name of [...this.seen].sort()) {
      if (this.skip.has(name)) continue;
      if (maskCategory(name) !== undefined) {
        this.skip.set(name, 'personal data');
        continue;
      }
      const values = items.map((r) => r[name]).filter((v): v is Json => v !== undefined);
      if (values.some((v) => v !== null && typeof v === 'object')) {
        this.skip.set(name, 'nested values');
        continue;
      }
      const present = values.filter((v) => v !== null);
      const numeric = present.length > 0 && present.every(isNumeric);
      if (
        !numeric &&
        present.length > 0 &&
        new Set(present.map(String)).size > IDENTIFIER_SHARE * present.length &&
        present.length >= 20
      ) {
        this.skip.set(name, 'identifier-like');
        continue;
      }
      const bins = featureBins(values.map((v) => asNumberIfNumeric(v, numeric)));
      this.columns.push({ name, numeric, bins, over: new OverTime(binLabels(bins).length) });
    }
  }

  /** Pass 2: count every row of the input per period. */
  async count(path: string, reading: InputReading, periods: RowColumns): Promise<void> {
    this.prepare();
    for await (const r of readRows(path, reading)) {
      if (r.readError) continue;
      const period = periods.periodOf(r.row) as string;
      for (const c of this.columns) {
        const s = scalar(r.data[c.name]);
        const v = s === undefined ? null : asNumberIfNumeric(s, c.numeric);
        c.over.add(period, binOf(c.bins, typeof v === 'number' && Number.isNaN(v) ? null : v));
      }
    }
  }

  figures(minKeys: number): InputStabilityFigures {
    return {
      rows: this.sample.count,
      columns: this.columns.map((c) => c.over.figures(c.name, 'input', c.numeric ? 'numeric' : 'categorical', minKeys)),
      skipped: [...this.skip.entries()]
        .filter(([column]) => this.seen.has(column))
        .sort((x, y) => (x[0] < y[0] ? -1 : 1))
        .map(([column, reason]) => ({ column, reason })),
    };
  }
}
