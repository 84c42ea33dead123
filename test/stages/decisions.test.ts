/** summary.json's decisions and versions as the DecisionCounter counts them (src/stages/decisions.ts). */
import { describe, expect, it } from 'vitest';
import { DecisionCounter } from '../../src/stages/index.js';

const STAGES = [
  { id: 'decision', kind: 'workflow' },
  { id: 'bureau', kind: 'bureau_features' },
];
const line = (decision: string, version: string | null, skipped = false) => ({
  decision: skipped ? { skipped: true } : { decision, workflow: 'location', workflow_version: version },
  bureau: { score: 1 },
});

describe('DecisionCounter', () => {
  it('counts rows and decisions per version of the stages whose answers carry one; skipped rows have none', () => {
    const c = new DecisionCounter(STAGES);
    for (const l of [
      line('Approve', 'v1'),
      line('Reject', 'v1'),
      line('Approve', 'v2'),
      line('', null, true),
      line('Approve', null),
    ])
      c.add(l);
    expect(c.counts).toEqual({ decision: { Approve: 3, Reject: 1, '(skipped)': 1 } });
    expect(c.versions).toEqual({
      decision: {
        v1: { rows: 2, workflow: 'location', decisions: { Approve: 1, Reject: 1 } },
        v2: { rows: 1, workflow: 'location', decisions: { Approve: 1 } },
        '(none)': { rows: 1, workflow: 'location', decisions: { Approve: 1 } },
      },
    });
  });

  it('saves and restores both; an index saved before versions were counted restores its decisions alone', () => {
    const a = new DecisionCounter(STAGES);
    a.add(line('Approve', 'v1'));
    const b = new DecisionCounter(STAGES);
    b.add(line('Reject', 'v2'));
    b.restore(a.save());
    expect(b.counts.decision).toEqual({ Approve: 1, Reject: 1 });
    expect(Object.keys(b.versions.decision).sort()).toEqual(['v1', 'v2']);
    b.restore({ decision: { Approve: 5 } });
    expect(b.counts.decision).toEqual({ Approve: 6, Reject: 1 });
    expect(b.versions.decision.v1.rows).toBe(1);
    b.replace(a.save());
    expect(b.counts.decision).toEqual({ Approve: 1 });
    expect(b.versions.decision).toEqual({ v1: { rows: 1, workflow: 'location', decisions: { Approve: 1 } } });
  });
});
