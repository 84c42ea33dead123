/**
 * The input columns a back-test needs (--by segment, --outcome, --period), joined to results by data row number.
 * Read once, before the join, into typed arrays indexed by row: 5 bytes a row (a 1,000,000-row input costs
 * about 5 MB), instead of holding the rows themselves.
 */
import { BreError } from '@bre-batch/core/errors';
import { readRows, type ReadOptions } from '@bre-batch/formats/input/read';
import type { InputRow } from '@bre-batch/core/types';
import type { Outcome } from './comparison.js';
import { MISSING_PERIOD, periodOf, type PeriodUnit } from '@bre-batch/formats/input/period';

/** Distinct segment values kept; the rest are grouped as "(other)" (a --by on an id column must not blow up). */
const MAX_SEGMENTS = 100;
const OTHER_SEGMENT = '(other)';
const MISSING_SEGMENT = '(missing)';
/** Distinct periods accepted (ten years of weeks); more means the wrong column or unit. */
const MAX_PERIODS = 520;

export interface PeriodColumn {
  readonly column: string;
  readonly unit: PeriodUnit;
}

/** 1 / 0 (numbers or numeric text), true / false (booleans or text) → bad / good; anything else unknown. */
export function parseOutcome(value: unknown): Outcome {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value === 1 ? 1 : value === 0 ? 0 : null;
  if (typeof value === 'string') {
    const t = value.trim().toLowerCase();
    if (t === 'true') return 1;
    if (t === 'false') return 0;
    if (t === '') return null;
    const n = Number(t);
    return n === 1 ? 1 : n === 0 ? 0 : null;
  }
  return null;
}

function segmentText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const s =
    typeof value === 'string' ? value.trim() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return s === '' ? null : s;
}

export class RowColumns {
  private seg = new Uint8Array(0);
  private out = new Int8Array(0);
  private per = new Uint16Array(0);
  private readonly names: string[] = [MISSING_SEGMENT, OTHER_SEGMENT];
  private readonly ids = new Map<string, number>();
  private readonly periodNames: string[] = [MISSING_PERIOD];
  private readonly periodIds = new Map<string, number>();
  rows = 0;

  constructor(
    readonly by: string | undefined,
    readonly outcome: string | undefined,
    readonly period?: PeriodColumn,
  ) {}

  private ensure(row: number): void {
    if (row < this.out.length) return;
    const size = Math.max(1024, this.out.length * 2, row + 1);
    const seg = new Uint8Array(size);
    seg.set(this.seg);
    const out = new Int8Array(size).fill(-1);
    out.set(this.out);
    this.seg = seg;
    this.out = out;
    if (this.period) {
      const per = new Uint16Array(size);
      per.set(this.per);
      this.per = per;
    }
  }

  set(row: number, data: Record<string, unknown>): void {
    if (!Number.isInteger(row) || row < 1) return;
    this.ensure(row);
    this.rows = Math.max(this.rows, row);
    if (this.by !== undefined) this.seg[row] = this.segmentId(segmentText(lookup(data, this.by)));
    if (this.outcome !== undefined) {
      const o = parseOutcome(lookup(data, this.outcome));
      this.out[row] = o === null ? -1 : o;
    }
    if (this.period) this.per[row] = this.periodId(periodOf(lookup(data, this.period.column), this.period.unit));
  }

  private periodId(label: string | null): number {
    if (label === null) return 0;
    const known = this.periodIds.get(label);
    if (known !== undefined) return known;
    if (this.periodNames.length > MAX_PERIODS) {
      const p = this.period as PeriodColumn;
      throw new BreError(
        'USAGE',
        `Expected at most ${MAX_PERIODS} distinct periods in --period column '${p.column}' by ${p.unit}, got more; use a coarser --period-unit (month or quarter) or another column`,
        { field: 'period' },
      );
    }
    this.periodNames.push(label);
    this.periodIds.set(label, this.periodNames.length - 1);
    return this.periodNames.length - 1;
  }

  /** Period of a data row; undefined when no --period was given, "(missing)" when the row is unknown or not a date. */
  periodOf(row: number | null): string | undefined {
    if (!this.period) return undefined;
    if (row === null || row < 1 || row >= this.per.length) return MISSING_PERIOD;
    return this.periodNames[this.per[row]];
  }

  private segmentId(text: string | null): number {
    if (text === null) return 0;
    const known = this.ids.get(text);
    if (known !== undefined) return known;
    if (this.names.length >= MAX_SEGMENTS + 2) return 1;
    this.names.push(text);
    this.ids.set(text, this.names.length - 1);
    return this.names.length - 1;
  }

  /** Segment of a data row; undefined when no --by was given, "(missing)" when the row is unknown or empty. */
  segment(row: number | null): string | undefined {
    if (this.by === undefined) return undefined;
    if (row === null || row < 1 || row >= this.seg.length) return MISSING_SEGMENT;
    return this.names[this.seg[row]];
  }

  outcomeOf(row: number | null): Outcome | undefined {
    if (this.outcome === undefined) return undefined;
    if (row === null || row < 1 || row >= this.out.length) return null;
    const v = this.out[row];
    return v === 1 ? 1 : v === 0 ? 0 : null;
  }
}

/** A column by its name, or a nested NDJSON field by its dotted path. */
function lookup(data: Record<string, unknown>, column: string): unknown {
  if (column in data) return data[column];
  let cur: unknown = data;
  for (const part of column.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function hasColumn(data: Record<string, unknown>, column: string): boolean {
  return lookup(data, column) !== undefined;
}

/** How the input is read, as `run` reads: format, encoding (default UTF-8, a byte order mark decides), separator (default TAB for TSV, else sniffed). */
export type InputReading = Pick<ReadOptions, 'format' | 'encoding' | 'delimiter'>;

export interface InputColumnsOptions extends InputReading {
  readonly path: string;
  readonly by?: string;
  readonly outcome?: string;
  readonly period?: PeriodColumn;
  /** Sees every readable row once (the input stability sample). */
  readonly onRow?: (row: InputRow) => void;
}

/** Reads the input; fails with USAGE when a named column is in no row (exit 2, nothing written). */
export async function readInputColumns(opts: InputColumnsOptions): Promise<RowColumns> {
  const cols = new RowColumns(opts.by, opts.outcome, opts.period);
  let sawBy = opts.by === undefined;
  let sawOutcome = opts.outcome === undefined;
  let sawPeriod = opts.period === undefined;
  let firstColumns: string[] | null = null;
  let rows: AsyncIterable<InputRow>;
  try {
    rows = readRows(opts.path, { format: opts.format, encoding: opts.encoding, delimiter: opts.delimiter });
  } catch (err) {
    throw err instanceof BreError
      ? err
      : new BreError('INPUT_UNREADABLE', `Expected a readable input file, got '${opts.path}'`, { cause: err });
  }
  try {
    for await (const r of rows) {
      if (r.readError) continue;
      if (firstColumns === null) firstColumns = Object.keys(r.data);
      if (!sawBy && hasColumn(r.data, opts.by as string)) sawBy = true;
      if (!sawOutcome && hasColumn(r.data, opts.outcome as string)) sawOutcome = true;
      if (!sawPeriod && hasColumn(r.data, (opts.period as PeriodColumn).column)) sawPeriod = true;
      cols.set(r.row, r.data);
      opts.onRow?.(r);
    }
  } catch (err) {
    if (err instanceof BreError) throw err;
    throw new BreError(
      'INPUT_UNREADABLE',
      `Expected a readable input file for --by/--outcome/--period, got '${opts.path}' (${(err as Error).message})`,
      { cause: err },
    );
  }
  const shown = (firstColumns ?? []).slice(0, 30);
  const more = firstColumns && firstColumns.length > shown.length ? `, ... (${firstColumns.length} in all)` : '';
  const got = firstColumns && firstColumns.length > 0 ? `columns ${shown.join(', ')}${more}` : 'no data rows';
  if (!sawOutcome) {
    throw new BreError('USAGE', `Expected --outcome column '${opts.outcome}' in ${opts.path}, got ${got}`, {
      field: 'outcome',
      expected: `a column named ${opts.outcome}`,
    });
  }
  if (!sawPeriod) {
    const p = opts.period as PeriodColumn;
    throw new BreError('USAGE', `Expected --period column '${p.column}' in ${opts.path}, got ${got}`, {
      field: 'period',
      expected: `a column named ${p.column}`,
    });
  }
  if (!sawBy) {
    throw new BreError('USAGE', `Expected --by column '${opts.by}' in ${opts.path}, got ${got}`, {
      field: 'by',
      expected: `a column named ${opts.by}`,
    });
  }
  return cols;
}
