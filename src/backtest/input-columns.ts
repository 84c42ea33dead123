/**
 * The input columns a back-test needs (--by segment, --outcome), joined to results by data row number.
 * Read once, before the join, into typed arrays indexed by row: 3 bytes a row (a 1,000,000-row input costs
 * about 3 MB), instead of holding the rows themselves.
 */
import { BreError } from '../errors.js';
import { readRows, type InputFormat } from '../input/read.js';
import type { InputRow } from '../types.js';
import type { Outcome } from './comparison.js';

/** Distinct segment values kept; the rest are grouped as "(other)" (a --by on an id column must not blow up). */
export const MAX_SEGMENTS = 100;
export const OTHER_SEGMENT = '(other)';
export const MISSING_SEGMENT = '(missing)';

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

export function segmentText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const s = typeof value === 'string' ? value.trim() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return s === '' ? null : s;
}

export class RowColumns {
  private seg = new Uint8Array(0);
  private out = new Int8Array(0);
  private readonly names: string[] = [MISSING_SEGMENT, OTHER_SEGMENT];
  private readonly ids = new Map<string, number>();
  rows = 0;

  constructor(readonly by: string | undefined, readonly outcome: string | undefined) {}

  private ensure(row: number): void {
    if (row < this.out.length) return;
    const size = Math.max(1024, this.out.length * 2, row + 1);
    const seg = new Uint8Array(size);
    seg.set(this.seg);
    const out = new Int8Array(size).fill(-1);
    out.set(this.out);
    this.seg = seg;
    this.out = out;
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

export interface InputColumnsOptions {
  readonly path: string;
  readonly format?: InputFormat;
  /** As `run` reads: a WHATWG encoding name (default UTF-8, a byte order mark decides). */
  readonly encoding?: string;
  /** As `run` reads: the CSV separator (default TAB for TSV, else sniffed). */
  readonly delimiter?: string;
  readonly by?: string;
  readonly outcome?: string;
}

/** Reads the input; fails with USAGE when a named column is in no row (exit 2, nothing written). */
export async function readInputColumns(opts: InputColumnsOptions): Promise<RowColumns> {
  const cols = new RowColumns(opts.by, opts.outcome);
  let sawBy = opts.by === undefined;
  let sawOutcome = opts.outcome === undefined;
  let firstColumns: string[] | null = null;
  let rows: AsyncIterable<InputRow>;
  try {
    rows = readRows(opts.path, { format: opts.format, encoding: opts.encoding, delimiter: opts.delimiter });
  } catch (err) {
    throw err instanceof BreError ? err : new BreError('INPUT_UNREADABLE', `Expected a readable input file, got '${opts.path}'`, { cause: err });
  }
  try {
    for await (const r of rows) {
      if (r.readError) continue;
      if (firstColumns === null) firstColumns = Object.keys(r.data);
      if (!sawBy && hasColumn(r.data, opts.by as string)) sawBy = true;
      if (!sawOutcome && hasColumn(r.data, opts.outcome as string)) sawOutcome = true;
      cols.set(r.row, r.data);
    }
  } catch (err) {
    if (err instanceof BreError) throw err;
    throw new BreError('INPUT_UNREADABLE', `Expected a readable input file for --by/--outcome, got '${opts.path}' (${(err as Error).message})`, { cause: err });
  }
  const shown = (firstColumns ?? []).slice(0, 30);
  const more = firstColumns && firstColumns.length > shown.length ? `, ... (${firstColumns.length} in all)` : '';
  const got = firstColumns && firstColumns.length > 0 ? `columns ${shown.join(', ')}${more}` : 'no data rows';
  if (!sawOutcome) {
    throw new BreError('USAGE', `Expected --outcome column '${opts.outcome}' in ${opts.path}, got ${got}`, { field: 'outcome', expected: `a column named ${opts.outcome}` });
  }
  if (!sawBy) {
    throw new BreError('USAGE', `Expected --by column '${opts.by}' in ${opts.path}, got ${got}`, { field: 'by', expected: `a column named ${opts.by}` });
  }
  return cols;
}
