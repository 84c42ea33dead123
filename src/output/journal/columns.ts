/**
 * The columns of results.csv and results.parquet, kept while the run goes instead of found by a first pass
 * over results.ndjson at the end: every stage field seen so far, with the JSON types its values had (as bits,
 * so that a column's type only ever widens). The order of the file columns is computed from the union at the
 * end (row, key, then each stage in pipeline order: its known columns first, any others sorted), so the
 * header is the same however the run was interrupted.
 *
 * The union is journalled under .state/ (src/output/journal/column-journal.ts), one line per field that is new or
 * wider, written before the results line that showed it.
 */

import type { ColumnKind } from '@bre-batch/core/types';

/** Type bits of a value. null is no type: every column may hold nulls. */
export const TYPE = { bool: 1, int: 2, float: 4, string: 8, array: 16, object: 32 } as const;

/**
 * A value as the JSON line holds it: the run hands over objects, and JSON.stringify turns NaN and
 * Infinity into null and a Date (anything with toJSON) into its JSON form.
 */
export function asJsonValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    return (v as { toJSON: () => unknown }).toJSON();
  return v;
}

export function typeBit(value: unknown): number {
  const v = typeof value === 'object' && value !== null ? asJsonValue(value) : value;
  switch (typeof v) {
    case 'boolean':
      return TYPE.bool;
    case 'number':
      // NaN and Infinity become null in JSON; integers beyond 2^53 are not exact, so they are doubles.
      if (!Number.isFinite(v)) return 0;
      return Number.isSafeInteger(v) ? TYPE.int : TYPE.float;
    case 'string':
      return TYPE.string;
    case 'object':
      return v === null ? 0 : Array.isArray(v) ? TYPE.array : TYPE.object;
    default:
      return 0;
  }
}

export interface StageColumns {
  readonly id: string;
  /** The stage kind's known result fields, in their documented order. */
  readonly known: readonly string[];
  /**
   * Their declared kinds (StageKind.resultFields): a column's type is the declared one widened by what its
   * values were, so that a field null in every row is typed all the same (and as the sink's column is).
   */
  readonly kinds?: Readonly<Record<string, ColumnKind>>;
}

/** The type bits a value of a declared kind has (a date or a timestamp is text in the journal). */
export function kindBits(kind: ColumnKind | undefined): number {
  switch (kind) {
    case undefined:
      return 0;
    case 'boolean':
      return TYPE.bool;
    case 'int64':
      return TYPE.int;
    case 'double':
      return TYPE.float;
    case 'json':
      return TYPE.object;
    default:
      return TYPE.string;
  }
}

export interface ResultColumn {
  /** As in the file header: `<stage>.<field>`. */
  readonly name: string;
  readonly stage: string;
  readonly field: string;
  /** Type bits of every value seen (0: only nulls, or never seen). */
  readonly types: number;
}

/** A field that is new or whose type widened. */
export interface ColumnChange {
  readonly stage: string;
  readonly field: string;
  readonly types: number;
}

export type ResultStages = Record<string, Record<string, unknown> | undefined>;

export class ColumnUnion {
  readonly #stages = new Map<string, Map<string, number>>();

  /**
   * Adds the fields of one result (its `stages` object). Returns the changes, or undefined when there are
   * none (the usual case, cheap: one map look-up a field). Fields whose value is undefined are not
   * written by JSON.stringify and are not columns.
   */
  observe(stages: ResultStages): ColumnChange[] | undefined {
    let changes: ColumnChange[] | undefined;
    for (const stage in stages) {
      const fields = stages[stage];
      if (!fields || typeof fields !== 'object') continue;
      let known = this.#stages.get(stage);
      if (!known) this.#stages.set(stage, (known = new Map()));
      for (const field in fields) {
        const v = fields[field];
        if (v === undefined) continue;
        const before = known.get(field);
        const types = (before ?? 0) | typeBit(v);
        if (before !== types) {
          known.set(field, types);
          (changes ??= []).push({ stage, field, types });
        }
      }
    }
    return changes;
  }

  /** Adds a field with the given type bits (from the journal or another union). */
  add(stage: string, field: string, types: number): void {
    let known = this.#stages.get(stage);
    if (!known) this.#stages.set(stage, (known = new Map()));
    known.set(field, (known.get(field) ?? 0) | types);
  }

  addAll(other: ColumnUnion): void {
    for (const c of other.entries()) this.add(c.stage, c.field, c.types);
  }

  *entries(): Generator<ColumnChange> {
    for (const [stage, fields] of this.#stages) for (const [field, types] of fields) yield { stage, field, types };
  }

  get size(): number {
    let n = 0;
    for (const f of this.#stages.values()) n += f.size;
    return n;
  }

  /**
   * The stage columns in file order. Known columns are always there (empty when never seen); others only
   * when seen; stages not in `order` (a pipeline changed since) are left out, as results.csv always did.
   */
  columns(order: readonly StageColumns[]): ResultColumn[] {
    const out: ResultColumn[] = [];
    for (const s of order) {
      const seen = this.#stages.get(s.id) ?? new Map<string, number>();
      const known = new Set(s.known);
      for (const field of s.known)
        out.push({
          name: `${s.id}.${field}`,
          stage: s.id,
          field,
          types: (seen.get(field) ?? 0) | kindBits(s.kinds?.[field]),
        });
      const extra = [...seen.keys()].filter((f) => !known.has(f)).sort();
      for (const field of extra) out.push({ name: `${s.id}.${field}`, stage: s.id, field, types: seen.get(field)! });
    }
    return out;
  }
}
