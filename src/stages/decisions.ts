/**
 * summary.json's `decisions`: for each stage whose kind reads a decision (StageKind.decisionOf), the rows
 * under each label; and its `versions`: for each stage whose kind reads the strategy's version
 * (StageKind.versionOf), the rows and their decisions under each version. A run counts them while rebuilding
 * results.csv, a merge over the merged results: both here, so the labels are the same.
 */
import type { DecisionCounts, StrategyVersion, VersionCounts } from './types.js';
import { getStageKind } from './registry.js';

type Results = Readonly<Record<string, Readonly<Record<string, unknown>>>>;
type Result = Readonly<Record<string, unknown>>;

/** A version's label in the counts: the version the answer named, `(none)` when it named none. */
const versionLabel = (v: StrategyVersion): string => v.version ?? '(none)';

export class DecisionCounter {
  readonly #readers: {
    readonly id: string;
    readonly read: (result: Result) => string;
    readonly version?: (result: Result) => StrategyVersion;
  }[] = [];
  readonly counts: DecisionCounts = {};
  readonly versions: VersionCounts = {};
  /** The stages as plain data: a counter like this one is made from them on another thread (the end's). */
  readonly stages: readonly { readonly id: string; readonly kind: string }[];

  /** `kind` may be unknown (a merge whose pipeline file is gone): such a stage is not counted. */
  constructor(stages: readonly { readonly id: string; readonly kind: string }[]) {
    this.stages = stages.map(({ id, kind }) => ({ id, kind }));
    for (const st of stages) {
      const kind = getStageKind(st.kind);
      if (!kind?.decisionOf) continue;
      this.#readers.push({
        id: st.id,
        read: kind.decisionOf.bind(kind),
        ...(kind.versionOf ? { version: kind.versionOf.bind(kind) } : {}),
      });
      this.counts[st.id] = {};
      if (kind.versionOf) this.versions[st.id] = {};
    }
  }

  /** The counts as they are now (kept beside the results files: output/spool/results-index.ts). */
  save(): { decisions: DecisionCounts; versions: VersionCounts } {
    return structuredClone({ decisions: this.counts, versions: this.versions });
  }

  /**
   * Counts saved by `save` (of other rows) added to these; a stage or label unknown here is left out. An index
   * written before the versions were counted saved the decisions alone: its rows' versions stay uncounted.
   */
  restore(saved: unknown): void {
    if (typeof saved !== 'object' || saved === null) return;
    const s = saved as { decisions?: unknown; versions?: unknown };
    const both = typeof s.decisions === 'object' && s.decisions !== null;
    addLabels(this.counts, both ? s.decisions : saved);
    if (!both || typeof s.versions !== 'object' || s.versions === null) return;
    for (const [id, versions] of Object.entries(s.versions as Record<string, unknown>)) {
      const into = this.versions[id];
      if (!into || typeof versions !== 'object' || versions === null) continue;
      for (const [label, v] of Object.entries(versions as Record<string, unknown>)) {
        const c = v as { rows?: unknown; workflow?: unknown; decisions?: unknown } | null;
        if (typeof c?.rows !== 'number') continue;
        const to = (into[label] ??= {
          rows: 0,
          workflow: typeof c.workflow === 'string' ? c.workflow : null,
          decisions: {},
        });
        to.rows += c.rows;
        addLabels({ d: to.decisions }, { d: c.decisions });
      }
    }
  }

  /** These counts replaced by `saved` (what a counter of the same stages saved, on another thread). */
  replace(saved: unknown): void {
    for (const labels of Object.values(this.counts)) for (const label of Object.keys(labels)) delete labels[label];
    for (const versions of Object.values(this.versions))
      for (const label of Object.keys(versions)) delete versions[label];
    this.restore(saved);
  }

  /** One result line's stages. */
  add(stages: Results): void {
    for (const r of this.#readers) {
      const result = stages[r.id];
      if (!result) continue;
      const skipped = result.skipped === true;
      const label = skipped ? '(skipped)' : r.read(result);
      const into = this.counts[r.id];
      into[label] = (into[label] ?? 0) + 1;
      if (!r.version || skipped) continue;
      const v = r.version(result);
      const counts = (this.versions[r.id][versionLabel(v)] ??= { rows: 0, workflow: v.workflow, decisions: {} });
      counts.rows += 1;
      counts.decisions[label] = (counts.decisions[label] ?? 0) + 1;
    }
  }
}

/** `from`'s counts (stage -> label -> n, as read from JSON) added into `into`, for the stages `into` has. */
function addLabels(into: Record<string, Record<string, number>>, from: unknown): void {
  if (typeof from !== 'object' || from === null) return;
  for (const [id, labels] of Object.entries(from as Record<string, unknown>)) {
    const to = into[id];
    if (!to || typeof labels !== 'object' || labels === null) continue;
    for (const [label, n] of Object.entries(labels as Record<string, unknown>))
      if (typeof n === 'number') to[label] = (to[label] ?? 0) + n;
  }
}
