/**
 * summary.json's `versions` (format: packages/formats/src/summary.ts): per stage, the rows and decisions of each
 * strategy version (counted with the decisions, src/stages/decisions.ts) and the first answer of each version (the
 * time series' `version` lines, src/pipeline/versions.ts). A run's end and a merge both build it here.
 */
import type { TimelineVersion } from '../metrics/timeline-lines.js';
import type { VersionCounts } from '../stages/types.js';
import type { VersionsSummary } from '@bre-batch/formats';

type FirstAnswer = Omit<TimelineVersion, 'kind'>;

/**
 * `first`: the first answers in the order they came (a merge's, of every shard: the earliest of each version
 * is kept). Undefined when no stage's answers carry a version.
 */
export function versionsSummary(counts: VersionCounts, first: readonly FirstAnswer[]): VersionsSummary | undefined {
  const stages = Object.keys(counts);
  if (stages.length === 0) return undefined;
  const out: VersionsSummary = {};
  for (const stage of stages) {
    const earliest = new Map<string | null, FirstAnswer>();
    for (const f of first) {
      if (f.stage !== stage) continue;
      const had = earliest.get(f.version);
      if (!had || f.t < had.t) earliest.set(f.version, f);
    }
    const by = counts[stage];
    out[stage] = {
      by_version: Object.fromEntries(
        Object.entries(by).map(([v, c]) => [v, { workflow: c.workflow, rows: c.rows, decisions: { ...c.decisions } }]),
      ),
      first_answers: [...earliest.values()]
        .sort((a, b) => a.t - b.t)
        .map((f) => ({
          version: f.version,
          workflow: f.workflow,
          at: new Date(f.t).toISOString(),
          row: f.row,
          session: f.session,
          ...(f.shard !== undefined ? { shard: f.shard } : {}),
        })),
      mixed: Object.keys(by).length > 1,
    };
  }
  return out;
}
