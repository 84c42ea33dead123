/**
 * The error lines of a run counted by field and code (or, for a row whose call failed, by stage and code): the
 * breakdown summary.json's `errors_by_field` keeps and the run's closing lines print, so that "63 would fail"
 * says which field, and how, without opening the errors file. A row with several bad fields counts under each.
 */
import type { RunSummary } from '@bre-batch/formats';

export type ErrorGroup = NonNullable<RunSummary['errors_by_field']>[number];

/** Groups printed by the closing lines; summary.json keeps them all. */
const SHOWN = 8;

export class ErrorGroups {
  readonly #groups = new Map<string, ErrorGroup>();

  /** One line of errors.ndjson (or dry-run-errors.ndjson), as written: already masked. */
  add(line: Readonly<Record<string, unknown>>): void {
    const code = typeof line.code === 'string' ? line.code : '(no code)';
    const stage = typeof line.stage === 'string' ? line.stage : null;
    const fields = new Set<string>();
    if (Array.isArray(line.errors))
      for (const e of line.errors as unknown[]) {
        const f = (e as { field?: unknown } | null)?.field;
        if (typeof f === 'string') fields.add(f);
      }
    if (fields.size === 0 && typeof line.field === 'string') fields.add(line.field);
    if (fields.size === 0) this.#count({ field: null, stage, code });
    for (const field of fields) this.#count({ field, stage: null, code });
  }

  #count(g: Omit<ErrorGroup, 'rows'>): void {
    const id = JSON.stringify([g.field, g.stage, g.code]);
    const had = this.#groups.get(id);
    if (had) had.rows += 1;
    else this.#groups.set(id, { ...g, rows: 1 });
  }

  /** Most rows first; ties by name, so that the order is the same every time. */
  result(): ErrorGroup[] {
    const name = (g: ErrorGroup) => `${g.field ?? `(stage ${g.stage ?? '-'})`} ${g.code}`;
    return [...this.#groups.values()].sort(
      (a, b) => b.rows - a.rows || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0),
    );
  }
}

/** `latitude INVALID_ROW 40, stage location UPSTREAM_5XX 3, ... and 2 more (summary.json errors_by_field)`. */
export function describeErrorGroups(groups: readonly ErrorGroup[]): string {
  const shown = groups
    .slice(0, SHOWN)
    .map((g) => `${g.field ?? `stage ${g.stage ?? '-'}`} ${g.code} ${g.rows}`)
    .join(', ');
  const more = groups.length - SHOWN;
  return more > 0 ? `${shown}, and ${more} more (summary.json errors_by_field)` : shown;
}
