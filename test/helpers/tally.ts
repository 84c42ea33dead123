/** summary.json's decisions of a test's one `wf` stage, as a run, the end and the spool's chunks count them. */
import { assembleResultFiles, type AssembleOptions, type Tally } from '../../src/output/spool/assemble.js';
import type { ResultLine } from '../../src/output/spool/spool.js';

export class Counts implements Tally {
  counts: Record<string, number> = {};
  add(stages: ResultLine['stages']): void {
    const d = String(stages.wf.decision);
    this.counts[d] = (this.counts[d] ?? 0) + 1;
  }
  save(): unknown {
    return { ...this.counts };
  }
  restore(saved: unknown): void {
    for (const [k, n] of Object.entries(saved as Record<string, number>)) this.counts[k] = (this.counts[k] ?? 0) + n;
  }
}

/** The end as a run calls it, the earlier sessions' lines it visits counted and their rows kept, in order. */
export async function assembleCounted(
  o: Omit<AssembleOptions, 'visit'>,
  counts: Counts,
): Promise<Awaited<ReturnType<typeof assembleResultFiles>> & { visited: number[] }> {
  const visited: number[] = [];
  const done = await assembleResultFiles({
    ...o,
    visit: (l) => {
      visited.push(l.row);
      counts.add(l.stages);
    },
  });
  return { ...done, visited };
}
