/**
 * summary.json's `decisions`: for each stage whose kind reads a decision (StageKind.decisionOf), the rows
 * under each label. A run counts them while rebuilding results.csv, a merge over the merged results: both
 * here, so the labels are the same.
 */
import type { DecisionCounts } from './types.js';
import { getStageKind } from './registry.js';

type Results = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export class DecisionCounter {
  readonly #readers: { readonly id: string; readonly read: (result: Readonly<Record<string, unknown>>) => string }[] =
    [];
  readonly counts: DecisionCounts = {};
  /** The stages as plain data: a counter like this one is made from them on another thread (the end's). */
  readonly stages: readonly { readonly id: string; readonly kind: string }[];

  /** `kind` may be unknown (a merge whose pipeline file is gone): such a stage is not counted. */
  constructor(stages: readonly { readonly id: string; readonly kind: string }[]) {
    this.stages = stages.map(({ id, kind }) => ({ id, kind }));
    for (const st of stages) {
      const kind = getStageKind(st.kind);
      if (!kind?.decisionOf) continue;
      this.#readers.push({ id: st.id, read: kind.decisionOf.bind(kind) });
      this.counts[st.id] = {};
    }
  }

  /** The counts as they are now (kept beside the results files: output/spool/results-index.ts). */
  save(): DecisionCounts {
    return structuredClone(this.counts);
  }

  /** Counts saved by `save` (of other rows) added to these; a stage or label unknown here is left out. */
  restore(saved: unknown): void {
    if (typeof saved !== 'object' || saved === null) return;
    for (const [id, labels] of Object.entries(saved as Record<string, unknown>)) {
      const into = this.counts[id];
      if (!into || typeof labels !== 'object' || labels === null) continue;
      for (const [label, n] of Object.entries(labels as Record<string, unknown>))
        if (typeof n === 'number') into[label] = (into[label] ?? 0) + n;
    }
  }

  /** These counts replaced by `saved` (what a counter of the same stages saved, on another thread). */
  replace(saved: unknown): void {
    for (const labels of Object.values(this.counts)) for (const label of Object.keys(labels)) delete labels[label];
    this.restore(saved);
  }

  /** One result line's stages. */
  add(stages: Results): void {
    for (const r of this.#readers) {
      const result = stages[r.id];
      if (!result) continue;
      const label = result.skipped === true ? '(skipped)' : r.read(result);
      const into = this.counts[r.id];
      into[label] = (into[label] ?? 0) + 1;
    }
  }
}
